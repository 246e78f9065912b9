import { buildJudgePrompt } from '../judge/prompt.ts';
import type { JudgeInput } from '../judge/types.ts';
import { buildTranslationPrompt, translationPromptParts } from '../providers/prompt.ts';
import { pseudoTranslate } from '../providers/pseudo.ts';
import type { ProviderKind, ProviderRequest, TranslateItem } from '../providers/types.ts';
import {
  countPromptTokens,
  countSystemTokens,
  countTokens,
  countTokensRemembered,
  PROMPT_OVERHEAD_TOKENS,
  rememberCounts,
} from './count.ts';

export interface TokenEstimate {
  /**
   * Tokens of the prompt that will be sent (system + user + chat framing), counted with o200k_base: exact for
   * judge prompts and pseudo; for translate prompts on an LLM a bound a few tokens above the exact count (see
   * `translatePromptTokensBound`).
   */
  tokensIn: number;
  /**
   * Upper bound on output tokens. For openai/anthropic it is sent upstream as `max_tokens`, so the upstream cannot
   * bill more; for pseudo it is the exact output count.
   */
  maxTokensOut: number;
}

/** Default cap on `max_tokens` (fits every current OpenAI and Anthropic chat model). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8192;

/**
 * Output bound of a translate call on an LLM: 16 + Σ over items (12 + tokens(id) + 4 × tokens(text)), capped.
 * 12 covers the JSON framing of one entry, 4× the growth of a translation over its source (scripts that tokenize
 * worse than English, expansion, escaping).
 */
export function translateMaxTokensOut(req: ProviderRequest, cap = DEFAULT_MAX_OUTPUT_TOKENS): number {
  let n = 16;
  for (const item of req.items) n += 12 + itemTokens(item);
  return Math.min(n, cap);
}

// Estimate (reservation) and translate both need the item counts of the same request: count each item once.
const itemCounts = new WeakMap<TranslateItem, { id: string; text: string; n: number }>();

const outputTokens = (item: TranslateItem) => countTokens(item.id) + 4 * countTokens(item.text);

function itemTokens(item: TranslateItem): number {
  const known = itemCounts.get(item);
  if (known && known.id === item.id && known.text === item.text) return known.n;
  const n = outputTokens(item);
  itemCounts.set(item, { id: item.id, text: item.text, n });
  return n;
}

/**
 * Prompt tokens of a translate call, counted piece by piece: the system message, the user document's head, each
 * item's JSON, one per comma between items, and the closing `]}` — each count remembered per distinct string, so
 * repeated items and configurations are not tokenized again (an item's output bound is remembered with its JSON).
 * The pieces meet only inside runs of JSON punctuation (`":[{"`, `"},{"`, `"}]}`), which the o200k pre-tokenizer
 * keeps in one piece when whole: counted apart they take as many tokens or a few more (≤ 2 per item boundary, see
 * estimate.test.ts), never fewer.
 */
export function translatePromptTokensBound(req: ProviderRequest, system: string): number {
  const parts = translationPromptParts(req);
  let n = countSystemTokens(system) + countTokensRemembered(parts.head) + countTokens(parts.tail);
  for (let i = 0; i < parts.items.length; i++) {
    const item = req.items[i]!;
    const [json, out] = rememberCounts(parts.items[i]!, (t) => [countTokens(t), outputTokens(item)]);
    n += json!;
    itemCounts.set(item, { id: item.id, text: item.text, n: out! });
  }
  return n + Math.max(0, parts.items.length - 1) + PROMPT_OVERHEAD_TOKENS;
}

/** Output bound of a judge call: 64 + 160 per item (the prompt allows at most 3 short errors per item), capped. */
export function judgeMaxTokensOut(input: JudgeInput, cap = DEFAULT_MAX_OUTPUT_TOKENS): number {
  return Math.min(64 + 160 * input.items.length, cap);
}

/**
 * Tokens to reserve before a translate call. `tokensIn` bounds the prompt that will be sent (the same
 * `buildTranslationPrompt`) from above, a few tokens over the exact o200k count (`translatePromptTokensBound`);
 * the upstream's own tokenizer may count a little differently, and settlement uses its usage report.
 * `maxTokensOut` is a hard bound (see `translateMaxTokensOut`); for `pseudo` both are exact.
 *
 * @example const { tokensIn, maxTokensOut } = estimateRequestTokens(req, provider.name);
 */
export function estimateRequestTokens(
  req: ProviderRequest,
  kind: ProviderKind = 'openai',
  maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS,
): TokenEstimate {
  if (kind === 'pseudo') {
    const r = pseudoTranslate(req);
    return { tokensIn: r.tokensIn, maxTokensOut: r.tokensOut };
  }
  return {
    tokensIn: translatePromptTokensBound(req, buildTranslationPrompt(req).system),
    maxTokensOut: translateMaxTokensOut(req, maxOutputTokens),
  };
}

/** Tokens to reserve before a judge call; the heuristic judge (pseudo) uses none. */
export function estimateJudgeTokens(
  input: JudgeInput,
  kind: ProviderKind = 'openai',
  maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS,
): TokenEstimate {
  if (kind === 'pseudo') return { tokensIn: 0, maxTokensOut: 0 };
  return {
    tokensIn: countPromptTokens(buildJudgePrompt(input)),
    maxTokensOut: judgeMaxTokensOut(input, maxOutputTokens),
  };
}
