import { answer } from './answer.ts';
import {
  contentText,
  type FakeKnobs,
  type FakeUpstream,
  type HandlerContext,
  type Reply,
  type SeenRequest,
  startFake,
} from './server.ts';

function error(status: number, type: string, message: string): Reply {
  return { status, body: { type: 'error', error: { type, message } } };
}

/** Anthropic's error types per status, as in its errors documentation. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function failure(status: number, retryAfter: number | null): Reply {
  const r = error(status, ERROR_TYPES[status] ?? 'api_error', 'Simulated failure.');
  return retryAfter !== null ? { ...r, headers: { 'retry-after': String(retryAfter) } } : r;
}

let sequence = 0;

function handle(req: SeenRequest, knobs: FakeKnobs, ctx: HandlerContext): Reply {
  const path = req.path.split('?')[0];
  if (req.method !== 'POST' || path !== '/v1/messages') return error(404, 'not_found_error', 'Not found');
  if (knobs.apiKey !== null) {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '')
      return error(401, 'authentication_error', 'x-api-key header is required');
    if (key !== knobs.apiKey) return error(401, 'authentication_error', 'invalid x-api-key');
  }
  if (typeof req.headers['anthropic-version'] !== 'string') {
    return error(400, 'invalid_request_error', 'anthropic-version: header is required');
  }
  if (knobs.failStatus !== null) return failure(knobs.failStatus, knobs.retryAfterSeconds);
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return error(400, 'invalid_request_error', 'There was an error parsing the body of your request.');
  }
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '')
    return error(400, 'invalid_request_error', 'model: Field required');
  if (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens)) {
    return error(400, 'invalid_request_error', 'max_tokens: Field required');
  }
  if (b.max_tokens < 1)
    return error(400, 'invalid_request_error', 'max_tokens: Input should be greater than or equal to 1');
  if (!Array.isArray(b.messages) || b.messages.length === 0) {
    return error(400, 'invalid_request_error', 'messages: at least one message is required');
  }
  let user = '';
  for (const [i, m] of (b.messages as { role?: unknown; content?: unknown }[]).entries()) {
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (m === null || typeof m !== 'object' || m.role !== expected) {
      return error(
        400,
        'invalid_request_error',
        `messages.${i}.role: roles must alternate between "user" and "assistant", starting with "user"`,
      );
    }
    const t = contentText(m.content);
    if (t === undefined)
      return error(400, 'invalid_request_error', `messages.${i}.content: Input should be a valid list`);
    if (m.role === 'user') user += t;
  }
  let system = '';
  if (b.system !== undefined) {
    const s = contentText(b.system);
    if (s === undefined) return error(400, 'invalid_request_error', 'system: Input should be a valid string');
    system = s;
  }
  const a = answer(system, user, b.max_tokens, knobs, ctx);
  sequence++;
  return {
    status: 200,
    body: {
      id: `msg_fake${sequence}`,
      type: 'message',
      role: 'assistant',
      model: b.model,
      content: [{ type: 'text', text: a.text }],
      stop_reason: a.truncated ? 'max_tokens' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: a.promptTokens, output_tokens: a.completionTokens },
    },
  };
}

/**
 * A fake Anthropic Messages server (`POST {url}/v1/messages`). Checks `x-api-key` (401 authentication_error),
 * `anthropic-version`, `model`, `max_tokens`, alternating `messages`, `system` (400 invalid_request_error, in
 * Anthropic's `{type: 'error', error: {type, message}}` shape); translates with the pseudo transform; reports
 * `usage.input_tokens` / `output_tokens` counted with the tokenizer; honours `max_tokens` (stop_reason 'max_tokens').
 */
export function startFakeAnthropic(knobs: Partial<FakeKnobs> = {}): Promise<FakeUpstream> {
  return startFake('', handle, knobs, () =>
    error(413, 'request_too_large', 'Request exceeds the maximum allowed size.'),
  );
}
