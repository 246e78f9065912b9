// `trigger` against a real local HTTP server scripted answer by answer: what a rollout gives is retried,
// anything else is final, and the secret goes only into the Authorization header.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { trigger } from './trigger.ts';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A server answering the scripted statuses in turn (the last one from then on); resolves its base URL. */
async function scripted(statuses: number[], seen: string[]): Promise<string> {
  let i = 0;
  const listening = createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
    const status = statuses[Math.min(i++, statuses.length - 1)] as number;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
  });
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
}

const options = (baseUrl: string, retries: string[]) => ({
  baseUrl,
  secret: 's3cret',
  timeoutMs: 5000,
  delaysMs: [5, 5, 5],
  onRetry: (reason: string) => retries.push(reason),
});

describe('trigger', () => {
  it('retries 502/503/504 and then returns the answer', async () => {
    const seen: string[] = [];
    const retries: string[] = [];
    const r = await trigger('worker', options(await scripted([503, 502, 200], seen), retries));
    expect(r).toEqual({ ok: true, status: 200, body: '{"status":200}' });
    expect(retries).toEqual(['HTTP 503', 'HTTP 502']);
    expect(seen).toEqual(Array(3).fill('POST /api/worker Bearer s3cret'));
  });

  it('a 401 or a 500 is final at once; a 503 that lasts is returned after the last retry', async () => {
    for (const status of [401, 500]) {
      const retries: string[] = [];
      const r = await trigger('retention', options(await scripted([status], []), retries));
      expect(r).toMatchObject({ ok: false, status });
      expect(retries).toEqual([]);
      await new Promise<void>((resolve) => server?.close(() => resolve()));
      server = undefined;
    }
    const retries: string[] = [];
    const r = await trigger('worker', options(await scripted([503], []), retries));
    expect(r).toMatchObject({ ok: false, status: 503 });
    expect(retries).toHaveLength(3);
  });

  it('a connection refused each time is retried, then thrown', async () => {
    const base = await scripted([200], []);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    const retries: string[] = [];
    await expect(trigger('worker', options(base, retries))).rejects.toThrow();
    expect(retries).toEqual(['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED']);
  });
});
