import { heuristicJudge, type JudgeInput } from '@scriptorium/translation/judge';
import { findTerm, type GlossaryEntry, scanProtected } from '@scriptorium/translation/language';
import { formatTranslationReply, pseudoLocalize } from '@scriptorium/translation/providers';
import { countPromptTokens } from '@scriptorium/translation/tokens';
import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { FakeKnobs, HandlerContext } from './server.ts';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** A text that is not the JSON object the prompt asks for. */
export const MALFORMED_TEXT = 'Sure! Here are your translations: {"translations": {"a": "unterminated';

export interface Answer {
  text: string;
  /** The reply was cut at max_tokens. */
  truncated: boolean;
  promptTokens: number;
  completionTokens: number;
}

interface TaskItem {
  id?: unknown;
  text?: unknown;
  isIcu?: unknown;
  source?: unknown;
  target?: unknown;
}

/** Spoil a translation so the validators flag it (see FakeKnobs.invalidReplies). */
function spoil(source: string, target: string, isIcu: boolean, glossary: GlossaryEntry[]): string {
  const token = scanProtected(target, { icu: isIcu }).find((t) => t.text !== '%%');
  if (token) return target.slice(0, token.start) + target.slice(token.end);
  for (const g of glossary) {
    if (!g.neverTranslate) continue;
    const hit = findTerm(source, g.term)[0];
    if (hit && hit.text !== hit.text.toLowerCase()) return target.split(hit.text).join(hit.text.toLowerCase());
  }
  return '';
}

function translate(task: Record<string, unknown>, knobs: FakeKnobs, invalid: boolean): string {
  const items = Array.isArray(task.items) ? (task.items as TaskItem[]) : [];
  const glossary = Array.isArray(task.glossary) ? (task.glossary as GlossaryEntry[]) : [];
  const kept = items.slice(0, Math.max(0, items.length - knobs.omitItems));
  return formatTranslationReply(
    kept.map((i) => {
      const source = String(i.text ?? '');
      const isIcu = i.isIcu === true;
      const text = pseudoLocalize(source, {
        isIcu,
        targetLocale: typeof task.targetLocale === 'string' ? task.targetLocale : 'en',
        glossary,
        accents: knobs.transform === 'pseudo',
      });
      return { id: String(i.id), text: invalid ? spoil(source, text, isIcu, glossary) : text };
    }),
  );
}

function judge(task: Record<string, unknown>): string {
  const input: JudgeInput = {
    sourceLocale: String(task.sourceLocale ?? 'en'),
    targetLocale: String(task.targetLocale ?? 'en'),
    glossary: Array.isArray(task.glossary) ? (task.glossary as GlossaryEntry[]) : [],
    model: 'fake',
    items: (Array.isArray(task.items) ? (task.items as TaskItem[]) : []).map((i) => ({
      id: String(i.id),
      source: String(i.source ?? ''),
      target: String(i.target ?? ''),
      isIcu: i.isIcu === true,
    })),
  };
  const errors = heuristicJudge(input).errors.map((e) => ({
    id: e.itemId,
    category: e.category,
    severity: e.severity,
    description: e.description,
  }));
  return JSON.stringify({ errors });
}

/**
 * What the fake model "writes" for a prompt: the user message is read as the JSON task the real prompts send
 * (translate: pseudo-localized items keyed by id; judge: MQM errors from the heuristic judge); any other prompt
 * is echoed. Usage is counted honestly with the tokenizer, and the reply is cut at `maxTokens` like a real model.
 */
// The same prompt gets the same answer: remember recent ones so a benchmark measures the app, not the fake.
const recent = new Map<string, Answer>();
const RECENT_MAX = 256;

export function answer(system: string, user: string, maxTokens: number, knobs: FakeKnobs, ctx: HandlerContext): Answer {
  let task: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(user);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      task = parsed as Record<string, unknown>;
  } catch {
    task = undefined;
  }
  const malformed = knobs.malformed === true || knobs.malformed === 'content';
  const invalid = !malformed && task?.task === 'translate' && ctx.takeInvalidReply();
  const key = `${malformed}|${knobs.transform}|${knobs.omitItems}|${maxTokens}|${system.length}|${system}|${user}`;
  let honest = invalid ? undefined : recent.get(key);
  if (honest === undefined) {
    let text: string;
    if (malformed) text = MALFORMED_TEXT;
    else if (task?.task === 'translate') text = translate(task, knobs, invalid);
    else if (task?.task === 'judge') text = judge(task);
    else text = user;
    let tokens = encode(text, PLAIN);
    let truncated = false;
    if (tokens.length > maxTokens) {
      tokens = tokens.slice(0, maxTokens);
      text = decode(tokens);
      truncated = true;
    }
    honest = { text, truncated, promptTokens: countPromptTokens({ system, user }), completionTokens: tokens.length };
    if (!invalid) {
      if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value as string);
      recent.set(key, honest);
    }
  }
  return {
    ...honest,
    promptTokens: knobs.usage?.tokensIn ?? honest.promptTokens,
    completionTokens: knobs.usage?.tokensOut ?? honest.completionTokens,
  };
}
