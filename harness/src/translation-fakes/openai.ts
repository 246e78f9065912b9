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

function error(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): Reply {
  return { status, body: { error: { message, type, param, code } } };
}

/** The error bodies OpenAI sends for a status, as documented in its error-codes guide. */
function failure(status: number, retryAfter: number | null): Reply {
  const headers: Record<string, string> = retryAfter !== null ? { 'retry-after': String(retryAfter) } : {};
  const by: Record<number, Reply> = {
    400: error(400, 'Invalid request.', 'invalid_request_error'),
    401: error(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key'),
    403: error(403, 'You are not allowed to sample from this model.', 'invalid_request_error', 'model_not_found'),
    404: error(
      404,
      'The model does not exist or you do not have access to it.',
      'invalid_request_error',
      'model_not_found',
    ),
    429: error(429, 'Rate limit reached for requests.', 'requests', 'rate_limit_exceeded'),
    503: error(503, 'The engine is currently overloaded, please try again later.', 'server_error'),
  };
  const r = by[status] ?? error(status, 'The server had an error while processing your request.', 'server_error');
  return { ...r, headers };
}

interface Message {
  role?: unknown;
  content?: unknown;
}

let sequence = 0;

function handle(req: SeenRequest, knobs: FakeKnobs, ctx: HandlerContext): Reply {
  const path = req.path.split('?')[0];
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    return error(404, `Invalid URL (${req.method} ${path})`, 'invalid_request_error');
  }
  if (knobs.apiKey !== null) {
    const auth = req.headers.authorization;
    if (typeof auth !== 'string' || !auth.startsWith('Bearer ')) {
      return error(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
      );
    }
    if (auth.slice('Bearer '.length) !== knobs.apiKey) return failure(401, null);
  }
  if (knobs.failStatus !== null) return failure(knobs.failStatus, knobs.retryAfterSeconds);
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return error(
      400,
      "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
      'invalid_request_error',
    );
  }
  const b = body as Record<string, unknown>;
  if (typeof b.model !== 'string' || b.model === '') {
    return error(400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
  }
  if (!Array.isArray(b.messages) || b.messages.length === 0) {
    return error(
      400,
      "Missing required parameter: 'messages'.",
      'invalid_request_error',
      'missing_required_parameter',
      'messages',
    );
  }
  const messages = b.messages as Message[];
  let system = '';
  let user = '';
  for (const [i, m] of messages.entries()) {
    const text = contentText(m?.content);
    if (m === null || typeof m !== 'object' || !['system', 'developer', 'user', 'assistant'].includes(String(m.role))) {
      return error(
        400,
        `Invalid value for 'messages[${i}].role'.`,
        'invalid_request_error',
        'invalid_value',
        `messages[${i}].role`,
      );
    }
    if (text === undefined) {
      return error(
        400,
        `Invalid type for 'messages[${i}].content'.`,
        'invalid_request_error',
        'invalid_type',
        `messages[${i}].content`,
      );
    }
    if (m.role === 'system' || m.role === 'developer') system += text;
    else if (m.role === 'user') user += text;
  }
  const maxTokens = b.max_completion_tokens ?? b.max_tokens;
  if (maxTokens !== undefined && (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)) {
    return error(
      400,
      "Invalid 'max_tokens': integer below minimum value.",
      'invalid_request_error',
      'integer_below_min_value',
      'max_tokens',
    );
  }
  const format = b.response_format as { type?: unknown } | undefined;
  if (format !== undefined) {
    if (!format || !['text', 'json_object', 'json_schema'].includes(String(format.type))) {
      return error(
        400,
        "Invalid value for 'response_format.type'.",
        'invalid_request_error',
        'invalid_value',
        'response_format.type',
      );
    }
    if (format.type === 'json_object' && !/json/i.test(system + user)) {
      return error(
        400,
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
        'invalid_request_error',
        null,
        'messages',
      );
    }
  }
  const a = answer(system, user, typeof maxTokens === 'number' ? maxTokens : 4096, knobs, ctx);
  sequence++;
  return {
    status: 200,
    body: {
      id: `chatcmpl-fake${sequence}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: b.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: a.text, refusal: null },
          logprobs: null,
          finish_reason: a.truncated ? 'length' : 'stop',
        },
      ],
      ...(knobs.omitUsage
        ? {}
        : {
            usage: {
              prompt_tokens: a.promptTokens,
              completion_tokens: a.completionTokens,
              total_tokens: a.promptTokens + a.completionTokens,
            },
          }),
      system_fingerprint: 'fp_fake',
    },
  };
}

/**
 * A fake OpenAI-compatible chat completions server (`POST {url}/chat/completions`, url ends in `/v1`).
 * Checks `Authorization: Bearer` (401 with OpenAI's error body), the JSON body, `model`, `messages`,
 * `max_tokens`, `response_format` (400 like the real API); translates with the pseudo transform; reports
 * usage counted with the tokenizer; honours `max_tokens` (finish_reason 'length').
 *
 * @example const fake = await startFakeOpenAI(); createProvider({ kind: 'openai', baseUrl: fake.url, apiKey: FAKE_API_KEY, timeoutMs: 5000 });
 */
export function startFakeOpenAI(knobs: Partial<FakeKnobs> = {}): Promise<FakeUpstream> {
  return startFake('/v1', handle, knobs, () => error(413, 'Request too large.', 'invalid_request_error'));
}
