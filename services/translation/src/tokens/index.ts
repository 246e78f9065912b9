// Token counting with OpenAI's o200k_base BPE: a leaf, imported by the providers (estimates, pseudo's honest counts).
export {
  countPromptTokens,
  countSystemTokens,
  countTokens,
  countTokensRemembered,
  PROMPT_OVERHEAD_TOKENS,
  rememberCounts,
  TOKENIZER,
} from './count.ts';
