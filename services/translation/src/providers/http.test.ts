import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { joinUrl, postJson, retryAfter } from './http.ts';
import type { UpstreamError } from './upstream-error.ts';

describe('retryAfter', () => {
  it('reads delta-seconds and HTTP-dates', () => {
    expect(retryAfter('7')).toBe(7);
    expect(retryAfter('1.2')).toBe(2);
    const now = Date.parse('Sun, 22 Nov 2026 08:00:00 GMT');
    expect(retryAfter('Sun, 22 Nov 2026 08:00:30 GMT', now)).toBe(30);
    expect(retryAfter('Sun, 22 Nov 2026 07:00:00 GMT', now)).toBe(0);
  });
  it('ignores what it cannot read', () => {
    expect(retryAfter(null)).toBeUndefined();
    expect(retryAfter('soon')).toBeUndefined();
    expect(retryAfter('-3')).toBeUndefined();
  });
});

describe('joinUrl', () => {
  it('joins without doubled or missing slashes', () => {
    expect(joinUrl('http://h/v1/', '/chat/completions')).toBe('http://h/v1/chat/completions');
    expect(joinUrl('http://h', 'v1/messages')).toBe('http://h/v1/messages');
  });
});

describe('postJson', () => {
  type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
  async function serve(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => handler(req, body, res));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      close: () => new Promise<void>((r) => server.close(() => r())),
    };
  }

  it('sends JSON with the headers (and the URL user info as Basic auth) and parses the reply', async () => {
    const seen: { headers?: IncomingMessage['headers']; body?: string } = {};
    const s = await serve((req, body, res) => {
      Object.assign(seen, { headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    try {
      const withUser = s.url.replace('http://', 'http://us%20er:pw@');
      expect(await postJson(`${withUser}/v1/x`, { 'x-k': 'v' }, { a: 1 }, 5_000, undefined)).toEqual({ ok: true });
      expect(seen.body).toBe('{"a":1}');
      expect(seen.headers?.['content-type']).toBe('application/json');
      expect(seen.headers?.['x-k']).toBe('v');
      expect(seen.headers?.authorization).toBe(`Basic ${Buffer.from('us er:pw').toString('base64')}`);
    } finally {
      await s.close();
    }
  });

  it('does not follow a redirect, reports retry-after, refuses an oversized reply', async () => {
    const s = await serve((req, _body, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/elsewhere' }).end();
      } else if (req.url === '/busy') {
        res.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
        res.end('{"error":{"type":"rate_limit"}}');
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        for (let i = 0; i < 9; i++) res.write(chunk);
        res.end('{}');
      }
    });
    try {
      const err = (url: string) =>
        postJson(`${s.url}${url}`, {}, {}, 5_000, undefined).then(
          () => null,
          (e: UpstreamError) => e,
        );
      expect(await err('/moved')).toMatchObject({ reason: 'status', upstreamStatus: 302 });
      expect(await err('/busy')).toMatchObject({ reason: 'status', upstreamStatus: 429, retryAfterSeconds: 7 });
      expect(await err('/big')).toMatchObject({ reason: 'malformed' });
    } finally {
      await s.close();
    }
  });
});
