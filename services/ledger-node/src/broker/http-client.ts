// HTTP(S) for broker reads (and the subscriptions' writes): one keep-alive undici Agent per watcher that trusts the CA bundle
// of NODE_BROKER__TLS_CA_FILE (in addition to nothing else when it is set: a private CA), a
// timeout per request, and retries with exponential backoff and full jitter for what may pass
// (no answer, timeouts, 5xx, 429). A 4xx other than 429 is final at once.

import { fullJitterDelay } from '@scriptorium/backoff';
import { Agent, errors, request } from 'undici';
import { grownTo } from './growable.ts';
import { BrokerReadError } from './read-error.ts';

export interface BrokerHttpOptions {
  /** PEM CA bundle for HTTPS brokers; when set, only these roots are trusted. */
  ca?: Buffer | undefined;
  /** Per request: connect, headers and body each (default 10 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 3). */
  retries?: number;
  /** Backoff base and cap: attempt n waits random(0, min(cap, base × 2^n)) (default 200 ms, 5 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Injected for tests. */
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface BrokerResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body's bytes (a page is digested as it came, and decoded only when it must be parsed). */
  body: Buffer;
}

/**
 * Where the bodies of one sequential read go, one after the other: a buffer that grows to the largest body and is
 * reused. A body read into it is valid until the next one is. A read of a listing (300 pages of ~0.5 MB a pass at
 * 100k entities) then allocates its page memory once instead of once a page, and the garbage the collector must
 * find between two passes is the socket's chunks alone.
 */
export class BodyBuffer {
  private bytes: Uint8Array<ArrayBuffer>;

  constructor(initialBytes = 64 * 1024) {
    this.bytes = new Uint8Array(initialBytes);
  }

  /** Copies a body's chunks in, from the start; the body (a view of this buffer, valid until the next fill). */
  async fill(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
    let length = 0;
    for await (const chunk of chunks) {
      if (length + chunk.length > this.bytes.length) this.bytes = grownTo(this.bytes, length + chunk.length);
      this.bytes.set(chunk, length);
      length += chunk.length;
    }
    return Buffer.from(this.bytes.buffer, 0, length);
  }
}

export interface BrokerHttp {
  /**
   * GETs `url`; resolves only with a 200 response, else throws BrokerReadError. With `into`, the body is read into
   * that buffer and is valid until its next use.
   */
  get(broker: string, url: string, headers: Record<string, string>, into?: BodyBuffer): Promise<BrokerResponse>;
  /**
   * Any method, a JSON body or none: resolves with the answer whatever its status once it is final (5xx and 429
   * retried as a GET is); throws BrokerReadError only when no answer came.
   */
  send(
    broker: string,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<BrokerResponse>;
  close(): Promise<void>;
}

const retryable = (status: number) => status >= 500 || status === 429;

export function createBrokerHttp(options: BrokerHttpOptions = {}): BrokerHttp {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = options.retries ?? 3;
  const base = options.backoffBaseMs ?? 200;
  const cap = options.backoffMaxMs ?? 5000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 8,
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: options.ca ? { ca: options.ca, rejectUnauthorized: true } : { rejectUnauthorized: true },
  });

  async function once(
    broker: string,
    url: string,
    headers: Record<string, string>,
    into: BodyBuffer | undefined,
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE' = 'GET',
    payload?: string,
  ): Promise<BrokerResponse> {
    try {
      const res = await request(url, {
        method,
        headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
        ...(payload === undefined ? {} : { body: payload }),
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs * 3),
      });
      const body = into ? await into.fill(res.body) : Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, body };
    } catch (err) {
      const e = err as Error & { code?: string };
      const timeout =
        err instanceof errors.HeadersTimeoutError ||
        err instanceof errors.BodyTimeoutError ||
        err instanceof errors.ConnectTimeoutError ||
        e.name === 'TimeoutError';
      throw new BrokerReadError(broker, timeout ? 'timeout' : 'unreachable', e.code ?? e.message);
    }
  }

  return {
    async get(broker, url, headers, into) {
      let last: BrokerReadError | undefined;
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) await sleep(fullJitterDelay(attempt - 1, base, cap, random));
        let res: BrokerResponse;
        try {
          res = await once(broker, url, headers, into);
        } catch (err) {
          last = err as BrokerReadError;
          continue;
        }
        if (res.status === 200) return res;
        last = new BrokerReadError(broker, 'http_status', `GET answered ${res.status}`);
        if (!retryable(res.status)) break;
      }
      throw last as BrokerReadError;
    },
    async send(broker, method, url, headers, body) {
      const text = body === undefined ? undefined : JSON.stringify(body);
      let last: BrokerReadError | undefined;
      let answer: BrokerResponse | undefined;
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) await sleep(fullJitterDelay(attempt - 1, base, cap, random));
        try {
          answer = await once(broker, url, headers, undefined, method, text);
        } catch (err) {
          last = err as BrokerReadError;
          continue;
        }
        if (!retryable(answer.status)) return answer;
      }
      if (answer) return answer;
      throw last as BrokerReadError;
    },
    close: () => agent.close(),
  };
}
