import { hash } from 'node:crypto';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

/** The tokenizer every count uses: OpenAI's o200k_base BPE, bundled in the package (no download at run time). */
export const TOKENIZER = 'o200k_base';

// Customer text may contain strings like "<|endoftext|>": count them as plain text, never throw.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * Number of o200k_base tokens in `text`.
 *
 * @example countTokens('Hello, world') // 3
 */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return countO200k(text, PLAIN_TEXT);
}

/**
 * Chat framing the upstream adds around two messages (system + user): OpenAI's documented 3 tokens per message
 * plus 3 to prime the reply. The fakes count usage the same way, so estimates match them exactly.
 */
export const PROMPT_OVERHEAD_TOKENS = 9;

/** Prompt tokens of a system + user prompt as sent (text tokens plus chat framing). */
export function countPromptTokens(prompt: { system: string; user: string }): number {
  return countSystemTokens(prompt.system) + countTokens(prompt.user) + PROMPT_OVERHEAD_TOKENS;
}

// System prompts are a handful of fixed texts (per locale pair): remember their counts.
const systemCounts = new Map<string, number>();

/** `countTokens` of a system prompt (a handful of fixed texts, remembered by text). */
export function countSystemTokens(system: string): number {
  const known = systemCounts.get(system);
  if (known !== undefined) return known;
  const n = countTokens(system);
  if (systemCounts.size >= 256) systemCounts.clear();
  systemCounts.set(system, n);
  return n;
}

// Counts of recently seen strings (items, prompt heads), keyed by a SHA-256 digest so no customer text stays in
// memory. Bounded: cleared when full.
const MAX_REMEMBERED = 16_384;
const remembered = new Map<string, number[]>();

/**
 * `compute(text)`, remembered per distinct `text` (by digest): several numbers derived from one string, computed
 * once for repeated strings.
 */
export function rememberCounts(text: string, compute: (text: string) => number[]): number[] {
  const key = hash('sha256', text, 'base64');
  const known = remembered.get(key);
  if (known !== undefined) return known;
  const counts = compute(text);
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(key, counts);
  return counts;
}

/** `countTokens(text)`, remembered per distinct text (by digest). */
export function countTokensRemembered(text: string): number {
  if (text.length < 16) return countTokens(text);
  return rememberCounts(text, (t) => [countTokens(t)])[0]!;
}
