import { z } from 'zod';
import { countPromptTokens, countTokens } from '../tokens/index.ts';
import { completionMaxTokens, llmEstimates, translateMaxTokensOut } from './estimate.ts';
import { joinUrl, postJson } from './http.ts';
import { buildTranslationPrompt, parseTranslationReply } from './prompt.ts';
import type {
  CallOptions,
  CompletionPrompt,
  CompletionResult,
  ProviderRequest,
  ProviderResult,
  TranslationProvider,
} from './types.ts';
import { UpstreamError } from './upstream-error.ts';

/** The part of an OpenAI chat completion we rely on; anything else may vary between OpenAI, vLLM, Ollama, LiteLLM. */
const ChatCompletion = z.object({
  model: z.string().optional(),
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .optional(),
});

export interface OpenAIConfig {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  jsonMode: boolean;
  maxOutputTokens: number;
  tokenLimit: 'max_tokens' | 'max_completion_tokens';
}

/**
 * OpenAI-compatible chat completions: `POST {baseUrl}/chat/completions` with `Authorization: Bearer`, `messages`
 * (system + user), `temperature: 0`, `max_tokens` (or only `max_completion_tokens` for reasoning models), and
 * `response_format: {type: 'json_object'}` when jsonMode.
 * Usage comes from `usage.prompt_tokens` / `usage.completion_tokens`.
 */
export function createOpenAIProvider(cfg: OpenAIConfig): TranslationProvider {
  const url = joinUrl(cfg.baseUrl, 'chat/completions');
  const headers: Record<string, string> = cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {};

  async function complete(prompt: CompletionPrompt, opts: CallOptions = {}): Promise<CompletionResult> {
    const body = {
      model: prompt.model,
      messages: [
        { role: 'system', content: prompt.system },
        { role: 'user', content: prompt.user },
      ],
      ...(cfg.tokenLimit === 'max_tokens' ? { temperature: 0 } : {}),
      [cfg.tokenLimit]: completionMaxTokens(prompt, cfg.maxOutputTokens),
      ...((prompt.json ?? true) && cfg.jsonMode ? { response_format: { type: 'json_object' } } : {}),
    };
    const raw = await postJson(url, headers, body, cfg.timeoutMs, opts.signal);
    const parsed = ChatCompletion.safeParse(raw);
    if (!parsed.success) throw new UpstreamError('malformed', 'upstream reply is not a chat completion');
    const choice = parsed.data.choices[0]!;
    if (choice.finish_reason === 'length') {
      throw new UpstreamError('malformed', 'upstream reply was cut at max_tokens');
    }
    const text = choice.message.content;
    if (typeof text !== 'string' || text.length === 0) {
      throw new UpstreamError('malformed', 'upstream reply has no message content');
    }
    // Some OpenAI-compatible servers omit usage: count the exact prompt and reply with the tokenizer instead.
    const usage = parsed.data.usage;
    return {
      text,
      model: parsed.data.model ?? prompt.model,
      tokensIn: usage ? usage.prompt_tokens : countPromptTokens(prompt),
      tokensOut: usage ? usage.completion_tokens : countTokens(text),
    };
  }

  return {
    name: 'openai',
    ...llmEstimates(cfg.maxOutputTokens),
    complete,
    async translate(req: ProviderRequest, opts: CallOptions = {}): Promise<ProviderResult> {
      const prompt = buildTranslationPrompt(req);
      const maxTokens = translateMaxTokensOut(req, cfg.maxOutputTokens);
      const r = await complete({ ...prompt, model: req.model, maxTokens, json: true }, opts);
      const translations = parseTranslationReply(
        r.text,
        req.items.map((i) => i.id),
      );
      return { translations, model: r.model, tokensIn: r.tokensIn, tokensOut: r.tokensOut };
    },
  };
}
