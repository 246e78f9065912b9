import { z } from 'zod';
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

export const ANTHROPIC_VERSION = '2023-06-01';

const Message = z.object({
  type: z.literal('message'),
  model: z.string().optional(),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  stop_reason: z.string().nullable().optional(),
  usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }),
});

export interface AnthropicConfig {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  maxOutputTokens: number;
}

/**
 * Anthropic Messages API: `POST {baseUrl}/v1/messages` with `x-api-key`, `anthropic-version: 2023-06-01`,
 * `system`, one user message, `max_tokens`, `temperature: 0`. The reply text is the concatenation of its text
 * blocks; usage comes from `usage.input_tokens` / `usage.output_tokens`.
 */
export function createAnthropicProvider(cfg: AnthropicConfig): TranslationProvider {
  const url = joinUrl(cfg.baseUrl, 'v1/messages');
  const headers = { 'x-api-key': cfg.apiKey, 'anthropic-version': ANTHROPIC_VERSION };

  async function complete(prompt: CompletionPrompt, opts: CallOptions = {}): Promise<CompletionResult> {
    const body = {
      model: prompt.model,
      max_tokens: completionMaxTokens(prompt, cfg.maxOutputTokens),
      system: prompt.system,
      messages: [{ role: 'user', content: prompt.user }],
      temperature: 0,
    };
    const raw = await postJson(url, headers, body, cfg.timeoutMs, opts.signal);
    const parsed = Message.safeParse(raw);
    if (!parsed.success) throw new UpstreamError('malformed', 'upstream reply is not a message');
    if (parsed.data.stop_reason === 'max_tokens') {
      throw new UpstreamError('malformed', 'upstream reply was cut at max_tokens');
    }
    const text = parsed.data.content
      .filter((b) => b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text)
      .join('');
    if (text.length === 0) throw new UpstreamError('malformed', 'upstream reply has no text');
    return {
      text,
      model: parsed.data.model ?? prompt.model,
      tokensIn: parsed.data.usage.input_tokens,
      tokensOut: parsed.data.usage.output_tokens,
    };
  }

  return {
    name: 'anthropic',
    ...llmEstimates(cfg.maxOutputTokens),
    complete,
    async translate(req: ProviderRequest, opts: CallOptions = {}): Promise<ProviderResult> {
      const prompt = buildTranslationPrompt(req);
      const maxTokens = translateMaxTokensOut(req, cfg.maxOutputTokens);
      const r = await complete({ ...prompt, model: req.model, maxTokens }, opts);
      const translations = parseTranslationReply(
        r.text,
        req.items.map((i) => i.id),
      );
      return { translations, model: r.model, tokensIn: r.tokensIn, tokensOut: r.tokensOut };
    },
  };
}
