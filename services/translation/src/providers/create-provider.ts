import type { ProviderConfig, TranslationProvider } from './types.ts';

/**
 * Build the configured provider. Options are checked here (baseUrl required for openai/anthropic, timeoutMs > 0).
 *
 * @example const p = createProvider({ kind: 'pseudo', timeoutMs: 30_000 });
 */
export function createProvider(_cfg: ProviderConfig): TranslationProvider {
  throw new Error('createProvider: not implemented yet');
}
