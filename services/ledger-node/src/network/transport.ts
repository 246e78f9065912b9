// HTTP(S) client to peers: one undici Agent (keep-alive pool) carrying the cluster token, and in
// TLS mode the cluster CA (server verification) plus, in mutual mode, this node's client cert.
import { Agent, request } from 'undici';
import type { TlsConfig } from '../config.ts';

export interface PeerAddress {
  host: string;
  port: number;
}

export interface Response {
  status: number;
  body: unknown;
}

export interface Transport {
  post(peer: PeerAddress, path: string, body: unknown, timeoutMs?: number): Promise<Response>;
  /** POST of an already-serialized JSON body (broadcasts serialize once). */
  postRaw(
    peer: PeerAddress,
    path: string,
    json: string,
    timeoutMs?: number,
    headers?: Record<string, string>,
  ): Promise<Response>;
  get(peer: PeerAddress, path: string, timeoutMs?: number): Promise<Response>;
  close(): Promise<void>;
}

export interface TransportOptions {
  tls: TlsConfig | undefined;
  clusterToken: string | undefined;
  defaultTimeoutMs?: number;
}

export function createTransport(options: TransportOptions): Transport {
  const scheme = options.tls ? 'https' : 'http';
  const tls = options.tls;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 32,
    connect: tls
      ? {
          ...(tls.ca ? { ca: tls.ca } : {}),
          ...(tls.mode === 'mutual' ? { cert: tls.cert, key: tls.key } : {}),
          rejectUnauthorized: true,
        }
      : {},
  });
  const headers: Record<string, string> = {};
  if (options.clusterToken) headers.authorization = `Bearer ${options.clusterToken}`;
  const defaultTimeout = options.defaultTimeoutMs ?? 5000;

  async function send(
    method: 'GET' | 'POST',
    peer: PeerAddress,
    path: string,
    json: string | undefined,
    timeoutMs?: number,
    extra?: Record<string, string>,
  ): Promise<Response> {
    const host = peer.host.includes(':') && !peer.host.startsWith('[') ? `[${peer.host}]` : peer.host;
    const res = await request(`${scheme}://${host}:${peer.port}${path}`, {
      method,
      dispatcher: agent,
      headers: json === undefined ? headers : { ...headers, 'content-type': 'application/json', ...extra },
      body: json,
      headersTimeout: timeoutMs ?? defaultTimeout,
      bodyTimeout: timeoutMs ?? defaultTimeout,
    });
    const text = await res.body.text();
    let body: unknown = text;
    if ((res.headers['content-type'] ?? '').toString().includes('json')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    return { status: res.statusCode, body };
  }

  return {
    post: (peer, path, body, timeoutMs) => send('POST', peer, path, JSON.stringify(body), timeoutMs),
    postRaw: (peer, path, json, timeoutMs, extra) => send('POST', peer, path, json, timeoutMs, extra),
    get: (peer, path, timeoutMs) => send('GET', peer, path, undefined, timeoutMs),
    close: () => agent.close(),
  };
}
