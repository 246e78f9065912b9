import { decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import { heuristicJudge } from '../../src/judge/heuristic.ts';
import type { JudgeInput } from '../../src/judge/types.ts';
import { formatTranslationReply } from '../../src/providers/prompt.ts';
import { pseudoLocalize } from '../../src/providers/pseudo-transform.ts';
import type { GlossaryEntry } from '../../src/providers/types.ts';
import { countPromptTokens } from '../../src/tokens/count.ts';
import type { FakeKnobs } from './server.ts';

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

function translate(task: Record<string, unknown>, knobs: FakeKnobs): string {
  const items = Array.isArray(task.items) ? (task.items as TaskItem[]) : [];
  const glossary = Array.isArray(task.glossary) ? (task.glossary as GlossaryEntry[]) : [];
  const kept = items.slice(0, Math.max(0, items.length - knobs.omitItems));
  return formatTranslationReply(
    kept.map((i) => ({
      id: String(i.id),
      text: pseudoLocalize(String(i.text ?? ''), {
        isIcu: i.isIcu === true,
        targetLocale: typeof task.targetLocale === 'string' ? task.targetLocale : 'en',
        glossary,
        accents: knobs.transform === 'pseudo',
      }),
    })),
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
export function answer(system: string, user: string, maxTokens: number, knobs: FakeKnobs): Answer {
  let text: string;
  let task: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(user);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      task = parsed as Record<string, unknown>;
  } catch {
    task = undefined;
  }
  if (knobs.malformed === true || knobs.malformed === 'content') text = MALFORMED_TEXT;
  else if (task?.task === 'translate') text = translate(task, knobs);
  else if (task?.task === 'judge') text = judge(task);
  else text = user;
  let tokens = encode(text, PLAIN);
  let truncated = false;
  if (tokens.length > maxTokens) {
    tokens = tokens.slice(0, maxTokens);
    text = decode(tokens);
    truncated = true;
  }
  return {
    text,
    truncated,
    promptTokens: knobs.usage?.tokensIn ?? countPromptTokens({ system, user }),
    completionTokens: knobs.usage?.tokensOut ?? tokens.length,
  };
}
