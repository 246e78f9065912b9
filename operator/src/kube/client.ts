import http from 'node:http';
import https from 'node:https';
import { KubeApiError } from '../errors.ts';
import type { KubeAccess } from './kubeconfig.ts';

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
}

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR'; object: unknown };

/** Counts of requests by verb, for tests and the benchmark (how many writes did the operator make?). */
export interface RequestCounts {
  [verb: string]: number;
}

/**
 * A small Kubernetes REST client: JSON in and out, streaming watches, one keep-alive agent.
 * A KubeAccess (ours for static credentials, or `@kubernetes/client-node`'s KubeConfig) supplies the server, credentials and CA; the generated API classes
 * are not used because the operator needs subresources, server-side apply and metadata-only watches
 * on arbitrary kinds through one code path.
 */
export class KubeClient {
  readonly server: URL;
  readonly counts: RequestCounts = {};
  readonly #kc: KubeAccess;
  #agent: http.Agent | undefined;

  constructor(kc: KubeAccess) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.#kc = kc;
    this.server = new URL(cluster.server);
  }

  async #options(method: string, path: string, query: RequestOptions['query']): Promise<https.RequestOptions> {
    const url = new URL(this.server.toString().replace(/\/$/, '') + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const opts: https.RequestOptions = { method, headers: {} };
    await this.#kc.applyToHTTPSOptions(opts);
    if (!this.#agent) {
      const tls = { ca: opts.ca, cert: opts.cert, key: opts.key, rejectUnauthorized: opts.rejectUnauthorized };
      this.#agent =
        url.protocol === 'https:'
          ? new https.Agent({ keepAlive: true, maxSockets: 64, ...tls })
          : new http.Agent({ keepAlive: true, maxSockets: 64 });
    }
    return {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: opts.headers,
      agent: this.#agent,
      ...(opts.auth ? { auth: opts.auth } : {}),
    };
  }

  #send(opts: https.RequestOptions, body: string | undefined, signal?: AbortSignal): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = (opts.protocol === 'https:' ? https : http).request({ ...opts, signal }, resolve);
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  /** One request; resolves the parsed JSON body, throws KubeApiError on a non-2xx status. */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const opts = await this.#options(method, path, options.query);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    opts.headers = {
      ...opts.headers,
      accept: options.accept ?? 'application/json',
      ...(body !== undefined
        ? { 'content-type': options.contentType ?? 'application/json', 'content-length': Buffer.byteLength(body) }
        : {}),
    };
    this.counts[method] = (this.counts[method] ?? 0) + 1;
    const res = await this.#send(opts, body, options.signal);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw KubeApiError.fromResponse(method, path, status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /**
   * Streams a watch. Calls `onEvent` for each event and resolves when the server ends the stream
   * (its timeout); rejects on a network error or a non-2xx answer.
   */
  async watch(
    path: string,
    query: RequestOptions['query'],
    onEvent: (event: WatchEvent) => void,
    options: { signal?: AbortSignal; accept?: string } = {},
  ): Promise<void> {
    const opts = await this.#options('GET', path, { ...query, watch: true });
    opts.headers = { ...opts.headers, accept: options.accept ?? 'application/json' };
    this.counts.WATCH = (this.counts.WATCH ?? 0) + 1;
    const res = await this.#send(opts, undefined, options.signal);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      throw KubeApiError.fromResponse('WATCH', path, status, Buffer.concat(chunks).toString('utf8'));
    }
    let buffered = '';
    res.setEncoding('utf8');
    for await (const chunk of res) {
      buffered += chunk as string;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) onEvent(JSON.parse(line) as WatchEvent);
        newline = buffered.indexOf('\n');
      }
    }
  }

  close(): void {
    this.#agent?.destroy();
  }
}
