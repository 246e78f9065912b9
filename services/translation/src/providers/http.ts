import { type Dispatcher, Pool } from 'undici';
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

// One keep-alive connection pool per upstream origin (undici: a request is dispatched straight to a handler, with
// no ClientRequest, IncomingMessage or stream per call — markedly cheaper per call than node:http, and than fetch,
// which builds Request/Headers/web streams for every call). Up to 256 connections each, no pipelining.
const pools = new Map<string, Pool>();

interface RawReply {
  status: number;
  retryAfter: string | null;
  text: string;
}

/** Why a call was cut short by the caller's signal or the provider's timeout (set before the request is aborted). */
interface Cut {
  reason: 'timeout' | 'aborted' | null;
}

interface Target {
  pool: Pool;
  path: string;
  /** `Basic …` from the URL's user info, if any. */
  authorization: string | undefined;
}

// Parsed upstream URLs (a provider calls one or two URLs): the pool, the path and any user info, once per URL.
const targets = new Map<string, Target>();

function target(url: string): Target {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    let pool = pools.get(u.origin);
    if (!pool) {
      pool = new Pool(u.origin, { connections: 256, pipelining: 1 });
      pools.set(u.origin, pool);
    }
    t = {
      pool,
      path: `${u.pathname}${u.search}`,
      authorization:
        u.username || u.password
          ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`
          : undefined,
    };
    if (targets.size >= 64) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/**
 * One POST through the origin's pool; rejects with the raw error (mapped by postJson). Redirects are not followed.
 * A plain timer bounds the whole call (cheaper per call than AbortSignal.timeout + AbortSignal.any).
 */
function send(
  url: string,
  headers: Record<string, string>,
  payload: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  cut: Cut,
): Promise<RawReply> {
  return new Promise<RawReply>((resolve, reject) => {
    if (signal?.aborted) {
      cut.reason = 'aborted';
      reject(new Error('upstream call aborted'));
      return;
    }
    const { pool, path, authorization } = target(url);
    let controller: Dispatcher.DispatchController | null = null;
    let settled = false;
    const stop = (reason: 'timeout' | 'aborted') => {
      cut.reason ??= reason;
      const error = new Error(`upstream call ${reason}`);
      // Not started yet (waiting for a connection): aborted as soon as it starts.
      controller?.abort(error);
      fail(error);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    timer.unref();
    const onAbort = () => stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    function fail(error: unknown) {
      if (settled) return;
      done();
      reject(error);
    }
    let status = 0;
    let retry: string | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    pool.dispatch(
      {
        path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(authorization ? { authorization } : {}),
          ...headers,
        },
        body: payload,
      },
      {
        onRequestStart(c) {
          controller = c;
          if (settled) c.abort(new Error('upstream call cut short'));
        },
        onResponseStart(c, statusCode, responseHeaders) {
          status = statusCode;
          const r = responseHeaders['retry-after'];
          retry = typeof r === 'string' ? r : null;
          if (settled) c.abort(new Error('upstream call cut short'));
        },
        onResponseData(c, chunk) {
          size += chunk.byteLength;
          if (size > MAX_REPLY_BYTES) {
            const error = new UpstreamError('malformed', `upstream reply larger than ${MAX_REPLY_BYTES} bytes`);
            c.abort(error);
            fail(error);
            return;
          }
          chunks.push(chunk);
        },
        onResponseEnd() {
          if (settled) return;
          done();
          resolve({ status, retryAfter: retry, text: Buffer.concat(chunks, size).toString('utf8') });
        },
        onResponseError(_c, error) {
          fail(error);
        },
      },
    );
  });
}

/**
 * POST a JSON body and return the parsed JSON reply. Every failure becomes an UpstreamError: non-2xx ('status',
 * with the upstream status and retry-after; a redirect is not followed), network error ('network'), the provider's
 * timeout ('timeout'), the caller's signal ('aborted'), a non-JSON or oversized body ('malformed'). Headers and
 * bodies are never logged or put in messages.
 */
export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const cut: Cut = { reason: null };
  const failure = (e: unknown): UpstreamError => {
    if (e instanceof UpstreamError) return e;
    if (cut.reason === 'timeout') return new UpstreamError('timeout', `upstream did not answer within ${timeoutMs} ms`);
    if (cut.reason === 'aborted') return new UpstreamError('aborted', 'upstream call aborted by the caller');
    const code = (e as { code?: unknown }).code ?? (e as { cause?: { code?: unknown } }).cause?.code;
    return new UpstreamError('network', `upstream unreachable${typeof code === 'string' ? ` (${code})` : ''}`, {
      cause: e,
    });
  };
  let reply: RawReply;
  try {
    reply = await send(url, headers, JSON.stringify(body), timeoutMs, signal, cut);
  } catch (e) {
    throw failure(e);
  }
  const { status, text } = reply;
  if (status < 200 || status > 299) {
    const kind = errorKind(text);
    const wait = retryAfter(reply.retryAfter);
    throw new UpstreamError('status', `upstream answered ${status}${kind ? ` (${kind})` : ''}`, {
      upstreamStatus: status,
      ...(wait !== undefined ? { retryAfterSeconds: wait } : {}),
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new UpstreamError('malformed', `upstream answered ${status} with a body that is not JSON`, {
      upstreamStatus: status,
    });
  }
}

/** `base` + `path` without doubled or missing slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
