export { ANTHROPIC_VERSION } from './anthropic.ts';
export { createProvider } from './create-provider.ts';
export { completionMaxTokens, DEFAULT_MAX_OUTPUT_TOKENS, llmEstimates, translateMaxTokensOut } from './estimate.ts';
export {
  buildTranslationPrompt,
  extractJsonObject,
  formatTranslationReply,
  parseTranslationReply,
  TRANSLATE_TASK,
} from './prompt.ts';
export { createPseudoProvider, pseudoTranslate } from './pseudo.ts';
export { type PseudoOptions, pseudoLocalize } from './pseudo-transform.ts';
export type {
  CallOptions,
  CompletionPrompt,
  CompletionResult,
  ProviderConfig,
  ProviderKind,
  ProviderRequest,
  ProviderResult,
  TokenEstimate,
  TranslationProvider,
} from './types.ts';
export { UpstreamError, type UpstreamFailure } from './upstream-error.ts';
