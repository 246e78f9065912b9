import { createAnthropicProvider } from './anthropic.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS } from './estimate.ts';
import { createOpenAIProvider } from './openai.ts';
import { createPseudoProvider } from './pseudo.ts';
import type { ProviderConfig, TranslationProvider } from './types.ts';

function checkUrl(kind: string, baseUrl: string | undefined): string {
  if (baseUrl === undefined || baseUrl === '') throw new Error(`provider ${kind}: baseUrl is required`);
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new Error(`provider ${kind}: baseUrl is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`provider ${kind}: baseUrl must be http(s)`);
  return baseUrl;
}

/**
 * Build the configured provider. Options are checked here, once (a bad one throws an Error naming the field,
 * never its value): baseUrl required for openai/anthropic, apiKey required for anthropic, timeoutMs > 0.
 *
 * @example const p = createProvider({ kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', timeoutMs: 30_000 });
 */
export function createProvider(cfg: ProviderConfig): TranslationProvider {
  if (!Number.isFinite(cfg.timeoutMs) || cfg.timeoutMs <= 0)
    throw new Error(`provider ${cfg.kind}: timeoutMs must be > 0`);
  const maxOutputTokens = cfg.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  if (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1) {
    throw new Error(`provider ${cfg.kind}: maxOutputTokens must be a positive integer`);
  }
  switch (cfg.kind) {
    case 'pseudo':
      return createPseudoProvider();
    case 'openai':
      return createOpenAIProvider({
        baseUrl: checkUrl('openai', cfg.baseUrl),
        ...(cfg.apiKey ? { apiKey: cfg.apiKey } : {}),
        timeoutMs: cfg.timeoutMs,
        jsonMode: cfg.jsonMode ?? true,
        maxOutputTokens,
        tokenLimit: cfg.openaiTokenLimit ?? 'max_tokens',
      });
    case 'anthropic':
      if (!cfg.apiKey) throw new Error('provider anthropic: apiKey is required');
      return createAnthropicProvider({
        baseUrl: checkUrl('anthropic', cfg.baseUrl),
        apiKey: cfg.apiKey,
        timeoutMs: cfg.timeoutMs,
        maxOutputTokens,
      });
    default:
      throw new Error(`provider kind must be openai, anthropic or pseudo`);
  }
}
