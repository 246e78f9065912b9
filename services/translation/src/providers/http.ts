import http from 'node:http';
import https from 'node:https';
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

// One keep-alive agent per protocol: the upstream connection is reused across calls (node:http is markedly cheaper
// per call than fetch, which builds Request/Headers/web streams for every call).
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' }),
};

interface RawReply {
  status: number;
  retryAfter: string | null;
  text: string;
}

/** Why a call was cut short by the caller's signal or the provider's timeout (set before the request is destroyed). */
interface Cut {
  reason: 'timeout' | 'aborted' | null;
}

// Parsed upstream URLs (a provider calls one or two URLs): node:http takes ready options instead of a URL each call.
const targets = new Map<string, { isHttps: boolean; options: http.RequestOptions }>();

function target(url: string): { isHttps: boolean; options: http.RequestOptions } {
  let t = targets.get(url);
  if (!t) {
    const u = new URL(url);
    const isHttps = u.protocol === 'https:';
    t = {
      isHttps,
      options: {
        protocol: u.protocol,
        hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
        port: u.port || (isHttps ? 443 : 80),
        path: `${u.pathname}${u.search}`,
        ...(u.username || u.password
          ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` }
          : {}),
      },
    };
    if (targets.size >= 64) targets.clear();
    targets.set(url, t);
  }
  return t;
}

/**
 * One POST over node:http(s); rejects with the raw error (mapped by postJson). Redirects are not followed.
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
    const { isHttps, options } = target(url);
    const req = (isHttps ? https : http).request({
      ...options,
      method: 'POST',
      agent: isHttps ? agents['https:'] : agents['http:'],
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
        ...headers,
      },
    });
    const stop = (reason: 'timeout' | 'aborted') => {
      cut.reason ??= reason;
      req.destroy(new Error(`upstream call ${reason}`));
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    timer.unref();
    const onAbort = () => stop('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (error: unknown) => {
      done();
      reject(error);
    };
    req.once('error', fail);
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > MAX_REPLY_BYTES) {
          req.destroy(new UpstreamError('malformed', `upstream reply larger than ${MAX_REPLY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.once('error', fail);
      // Destroyed before the end (connection dropped, aborted, timed out): settle the promise either way.
      res.once('close', () => {
        if (!res.complete) fail(new Error('upstream connection closed mid-reply'));
      });
      res.once('end', () => {
        done();
        const retry = res.headers['retry-after'];
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: typeof retry === 'string' ? retry : null,
          text: Buffer.concat(chunks, size).toString('utf8'),
        });
      });
    });
    if (signal?.aborted) stop('aborted');
    else req.end(payload);
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
