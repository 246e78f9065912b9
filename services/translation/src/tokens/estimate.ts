import type { JudgeInput } from '../judge/types.ts';
import type { ProviderKind, ProviderRequest } from '../providers/types.ts';

export interface TokenEstimate {
  /** Tokens of the prompt that will be sent (system + user), counted with the bundled tokenizer. */
  tokensIn: number;
  /** Upper bound on output tokens; also sent upstream as `max_tokens`, so the upstream cannot exceed it. */
  maxTokensOut: number;
}

/** Token estimate for a translate call, made before the call to reserve quota. */
export function estimateRequestTokens(_req: ProviderRequest, _kind?: ProviderKind): TokenEstimate {
  throw new Error('estimateRequestTokens: not implemented yet');
}

/** Token estimate for a judge call. */
export function estimateJudgeTokens(_input: JudgeInput, _kind?: ProviderKind): TokenEstimate {
  throw new Error('estimateJudgeTokens: not implemented yet');
}
