// The HTTP plumbing the test broker's two APIs share: a parsed request, JSON replies with the exact
// content types the brokers send (Orion: `application/json`, no charset; ngsijs compares it
// verbatim), bounded body reading, and the fault hooks tests use to make a broker misbehave.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface BrokerRequest {
  method: string;
  /** Path without the query string, percent-decoded segments kept as sent. */
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** Raw body text ('' for none). */
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** Serialized body (JSON text) or undefined for an empty reply. */
  body?: string;
}

export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(value),
});

export const empty = (status: number, headers: Record<string, string> = {}): Reply => ({ status, headers });

/** A fault a test injects into the next listing requests (GET on an entity collection). */
export type Fault =
  | { kind: 'status'; status: number }
  | { kind: 'garbage' }
  | { kind: 'truncated' }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop-header'; header: string }
  /** The listing page as `rewrite` returns it (in-process tests: an entity made malformed, say). */
  | { kind: 'rewrite'; rewrite: (body: string) => string }
  | { kind: 'reset' };

export class BodyTooLarge extends Error {
  readonly size: number;
  constructor(size: number) {
    super(`payload size: ${size}`);
    this.size = size;
  }
}

export function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new BodyTooLarge(size));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  if (reply.body !== undefined) headers['Content-Length'] = Buffer.byteLength(reply.body);
  else headers['Content-Length'] = 0;
  res.writeHead(reply.status, headers);
  res.end(reply.body);
}

/** Applies an injected fault to a reply that would have been sent; true when the fault handled it. */
export async function applyFault(fault: Fault, res: ServerResponse, reply: Reply): Promise<boolean> {
  switch (fault.kind) {
    case 'status':
      send(res, json(fault.status, { error: 'InternalError', description: 'injected fault' }));
      return true;
    case 'garbage':
      send(res, { status: 200, headers: reply.headers ?? {}, body: '{"id": "urn:x", "type": [unterminated' });
      return true;
    case 'truncated': {
      const body = reply.body ?? '';
      // The advertised length is the full one, then the connection closes half-way.
      res.writeHead(reply.status, { ...reply.headers, 'Content-Length': Buffer.byteLength(body) });
      res.write(body.slice(0, Math.floor(body.length / 2)));
      res.destroy();
      return true;
    }
    case 'delay':
      await new Promise((r) => setTimeout(r, fault.ms));
      return false;
    case 'drop-header': {
      const headers = Object.fromEntries(
        Object.entries(reply.headers ?? {}).filter(([k]) => k.toLowerCase() !== fault.header.toLowerCase()),
      );
      send(res, { ...reply, headers });
      return true;
    }
    case 'rewrite':
      send(res, { ...reply, body: fault.rewrite(reply.body ?? '') });
      return true;
    case 'reset':
      res.socket?.destroy();
      return true;
  }
}
