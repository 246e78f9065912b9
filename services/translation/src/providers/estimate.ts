// Token estimation of the LLM providers (openai, anthropic): what a call may cost, before it is made. The quota
// and budget are reserved for it (the metering module), and the output bound is sent upstream as `max_tokens`.
// The pseudo provider's estimate is its exact answer (pseudo.ts).
import type { TranslateItem } from '../language/index.ts';
import {
  countPromptTokens,
  countSystemTokens,
  countTokens,
  countTokensRemembered,
  PROMPT_OVERHEAD_TOKENS,
  rememberCounts,
} from '../tokens/index.ts';
import { buildTranslationPrompt, translationPromptParts } from './prompt.ts';
import type { CompletionPrompt, ProviderRequest, TokenEstimate } from './types.ts';

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

/** The `max_tokens` sent with a completion: the prompt's own bound (default 1024), capped. */
export function completionMaxTokens(prompt: CompletionPrompt, cap = DEFAULT_MAX_OUTPUT_TOKENS): number {
  return Math.min(prompt.maxTokens ?? 1024, cap);
}

/**
 * The estimates of an LLM provider whose output is capped at `maxOutputTokens`. Translate: `tokensIn` bounds the
 * prompt that will be sent (the same `buildTranslationPrompt`) from above, a few tokens over the exact o200k count
 * (`translatePromptTokensBound`); the upstream's own tokenizer may count a little differently, and settlement uses its
 * usage report. `maxTokensOut` is a hard bound (`translateMaxTokensOut`). Completion: the exact prompt count and the
 * `max_tokens` sent (`completionMaxTokens`).
 *
 * @example const { estimateTranslate } = llmEstimates(8192); estimateTranslate(req) // { tokensIn, maxTokensOut }
 */
export function llmEstimates(maxOutputTokens = DEFAULT_MAX_OUTPUT_TOKENS): {
  estimateTranslate(req: ProviderRequest): TokenEstimate;
  estimateComplete(prompt: CompletionPrompt): TokenEstimate;
} {
  return {
    estimateTranslate: (req) => ({
      tokensIn: translatePromptTokensBound(req, buildTranslationPrompt(req).system),
      maxTokensOut: translateMaxTokensOut(req, maxOutputTokens),
    }),
    estimateComplete: (prompt) => ({
      tokensIn: countPromptTokens(prompt),
      maxTokensOut: completionMaxTokens(prompt, maxOutputTokens),
    }),
  };
}
