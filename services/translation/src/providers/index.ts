export { createProvider } from './create-provider.ts';
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
