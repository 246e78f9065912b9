export { countTokens, TOKENIZER } from './count.ts';
export { estimateJudgeTokens, estimateRequestTokens, type TokenEstimate } from './estimate.ts';
