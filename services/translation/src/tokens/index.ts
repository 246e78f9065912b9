export { countPromptTokens, countTokens, PROMPT_OVERHEAD_TOKENS, TOKENIZER } from './count.ts';
export {
  DEFAULT_MAX_OUTPUT_TOKENS,
  estimateJudgeTokens,
  estimateRequestTokens,
  judgeMaxTokensOut,
  type TokenEstimate,
  translateMaxTokensOut,
} from './estimate.ts';
