// What a judge call sends and may cost: the completion asked of the provider, and the tokens to reserve for it.
import type { CompletionPrompt, TokenEstimate, TranslationProvider } from '../providers/index.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../providers/index.ts';
import { buildJudgePrompt } from './prompt.ts';
import type { JudgeInput } from './types.ts';

/** Output bound of a judge call: 64 + 160 per item (the prompt allows at most 3 short errors per item), capped. */
export function judgeMaxTokensOut(input: JudgeInput, cap = DEFAULT_MAX_OUTPUT_TOKENS): number {
  return Math.min(64 + 160 * input.items.length, cap);
}

/** The completion an LLM judge call sends: the GEMBA-MQM prompt, the judge model, the output bound, JSON. */
export function judgeCompletion(input: JudgeInput): CompletionPrompt {
  return { ...buildJudgePrompt(input), model: input.model, maxTokens: judgeMaxTokensOut(input), json: true };
}

/**
 * Tokens to reserve before judging `input` with `provider`: what the provider estimates for the judge completion;
 * none for the heuristic judge (pseudo), which calls nothing.
 *
 * @example const { tokensIn, maxTokensOut } = estimateJudge(provider, input);
 */
export function estimateJudge(provider: TranslationProvider, input: JudgeInput): TokenEstimate {
  if (provider.name === 'pseudo') return { tokensIn: 0, maxTokensOut: 0 };
  return provider.estimateComplete(judgeCompletion(input));
}
