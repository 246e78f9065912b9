export { ANTHROPIC_VERSION } from './anthropic.ts';
export { createProvider } from './create-provider.ts';
export {
  buildTranslationPrompt,
  extractJsonObject,
  formatTranslationReply,
  parseTranslationReply,
  TRANSLATE_TASK,
} from './prompt.ts';
export { pseudoTranslate } from './pseudo.ts';
export { type PseudoOptions, pseudoLocalize } from './pseudo-transform.ts';
export type {
  CallOptions,
  CompletionPrompt,
  CompletionResult,
  GlossaryEntry,
  ProviderConfig,
  ProviderKind,
  ProviderRequest,
  ProviderResult,
  TranslateItem,
  TranslationProvider,
  TranslationStyle,
} from './types.ts';
export { UpstreamError, type UpstreamFailure } from './upstream-error.ts';
