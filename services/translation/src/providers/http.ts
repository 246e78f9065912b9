import { UpstreamError } from './upstream-error.ts';

/** Replies larger than this are refused (a translation batch reply is far smaller). */
export const MAX_REPLY_BYTES = 8 * 1024 * 1024;

/** Seconds from a `retry-after` header (delta-seconds or HTTP-date). */
export function retryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\s*[-+]?\d+(\.\d+)?\s*$/.test(header)) {
    const s = Number(header);
    return s >= 0 ? Math.ceil(s) : undefined;
  }
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

async function readCapped(res: Response): Promise<string> {
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_REPLY_BYTES)
      throw new UpstreamError('malformed', `upstream reply larger than ${MAX_REPLY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Error type/code from an OpenAI (`{error: {type, code}}`) or Anthropic (`{error: {type}}`) error body; never the message. */
function errorKind(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { type?: unknown; code?: unknown } };
    const kind = parsed.error?.code ?? parsed.error?.type;
    return typeof kind === 'string' ? kind.slice(0, 64) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST a JSON body and return the parsed JSON reply. Every failure becomes an UpstreamError: non-2xx ('status',
 * with the upstream status and retry-after), network error ('network'), the provider's timeout ('timeout'),
 * the caller's signal ('aborted'), a non-JSON or oversized body ('malformed'). Headers and bodies are never logged
 * or put in messages.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const failure = (e: unknown): UpstreamError => {
    if (e instanceof UpstreamError) return e;
    if (timeout.aborted) return new UpstreamError('timeout', `upstream did not answer within ${timeoutMs} ms`);
    if (signal?.aborted) return new UpstreamError('aborted', 'upstream call aborted by the caller');
    const code = (e as { cause?: { code?: unknown } }).cause?.code;
    return new UpstreamError('network', `upstream unreachable${typeof code === 'string' ? ` (${code})` : ''}`, {
      cause: e,
    });
  };
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: combined,
      redirect: 'error',
    });
    text = await readCapped(res);
  } catch (e) {
    throw failure(e);
  }
  if (res.status < 200 || res.status > 299) {
    const kind = errorKind(text);
    const wait = retryAfter(res.headers.get('retry-after'));
    throw new UpstreamError('status', `upstream answered ${res.status}${kind ? ` (${kind})` : ''}`, {
      upstreamStatus: res.status,
      ...(wait !== undefined ? { retryAfterSeconds: wait } : {}),
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UpstreamError('malformed', `upstream answered ${res.status} with a body that is not JSON`, {
      upstreamStatus: res.status,
    });
  }
}

/** `base` + `path` without doubled or missing slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
