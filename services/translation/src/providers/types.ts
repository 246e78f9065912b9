import type { GlossaryEntry, Style, TranslateItem, ValidationIssue } from '../language/index.ts';

export { UpstreamError, type UpstreamFailure } from './upstream-error.ts';

export type ProviderKind = 'openai' | 'anthropic' | 'pseudo';

export interface ProviderRequest {
  sourceLocale: string;
  targetLocale: string;
  items: TranslateItem[];
  style: Style;
  glossary: GlossaryEntry[];
  /** Upstream model id (tier mapping or `modelOverride` is the caller's business). */
  model: string;
  /** Issues found in a previous attempt; the prompt asks the model to fix them (retry hint). */
  feedback?: ValidationIssue[];
}

export interface ProviderResult {
  /** One per requested item, in request order. A reply missing an id is an UpstreamError('missing_items'). */
  translations: { id: string; text: string }[];
  /** Model the upstream reports having used (falls back to the requested one). */
  model: string;
  /** From the upstream's usage report (pseudo: counted with the tokenizer on the exact prompt). */
  tokensIn: number;
  tokensOut: number;
}

export interface CompletionPrompt {
  system: string;
  user: string;
  model: string;
  /** Upper bound on output tokens sent upstream (`max_tokens`). Default 1024. */
  maxTokens?: number;
  /** Ask for a JSON object reply (OpenAI `response_format`); the prompt must say JSON too. Default true. */
  json?: boolean;
}

export interface CompletionResult {
  text: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
}

export interface CallOptions {
  /** Caller's cancellation (client gone, shutdown). Combined with the provider's own timeout. */
  signal?: AbortSignal;
}

/** Tokens to reserve before a call (see `providers/estimate.ts`). */
export interface TokenEstimate {
  /** Tokens of the prompt that will be sent (system + user + chat framing): exact, or a bound a few tokens above. */
  tokensIn: number;
  /** Upper bound on output tokens (sent upstream as `max_tokens`, so the upstream cannot bill more); exact for pseudo. */
  maxTokensOut: number;
}

export interface TranslationProvider {
  readonly name: ProviderKind;
  /** Tokens to reserve before `translate(req)`: each provider knows what it will send and how much it may get back. */
  estimateTranslate(req: ProviderRequest): TokenEstimate;
  /** Tokens to reserve before `complete(prompt)`. */
  estimateComplete(prompt: CompletionPrompt): TokenEstimate;
  /** Translate a batch. Throws UpstreamError on any upstream failure. */
  translate(req: ProviderRequest, opts?: CallOptions): Promise<ProviderResult>;
  /** One raw completion (used by the judge). Throws UpstreamError on any upstream failure. */
  complete(prompt: CompletionPrompt, opts?: CallOptions): Promise<CompletionResult>;
}

export interface ProviderConfig {
  kind: ProviderKind;
  /** openai: e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 (Ollama); anthropic: https://api.anthropic.com */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer` (openai) or `x-api-key` (anthropic). Optional for local OpenAI-compatible servers. */
  apiKey?: string;
  /** Per upstream call, including reading the body. */
  timeoutMs: number;
  /** openai only: send `response_format: {type: 'json_object'}`. Default true; turn off for servers that reject it. */
  jsonMode?: boolean;
  /** Cap on `max_tokens` sent upstream (default 8192); the provider's estimates use the same cap. */
  maxOutputTokens?: number;
  /**
   * openai only: how the output limit is sent. 'max_tokens' (default; GPT-4-class, vLLM, Ollama, LiteLLM) or
   * 'max_completion_tokens' (OpenAI reasoning models, which also refuse `temperature`, so it is left out).
   */
  openaiTokenLimit?: 'max_tokens' | 'max_completion_tokens';
}
