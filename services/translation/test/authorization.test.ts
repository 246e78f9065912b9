// Deny-by-default: every registered route is walked with no, wrong and valid credentials.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteSpec } from '../src/http/route-spec.ts';
import { batch, bearer, type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let apiKey: string;
beforeAll(async () => {
  h = await startHarness();
  apiKey = (await h.account()).apiKey;
});
afterAll(async () => h?.close());

const bodies: Record<string, unknown> = {
  '/api/v1/translate': batch(1),
  '/api/v1/judge': { sourceLocale: 'en', targetLocale: 'de', items: [{ id: 'a', source: 'Hi', target: 'Hallo' }] },
  '/api/v1/playground': { source: 'Hi', targetLocale: 'de' },
};

const call = (spec: RouteSpec, headers: Record<string, string>) =>
  h.app.inject({
    method: spec.method,
    url: spec.url,
    headers,
    ...(bodies[spec.url] ? { payload: bodies[spec.url] as object } : {}),
  });

describe('authorization walk', () => {
  it('covers the routes of this issue', () => {
    const urls = h.registry.specs.map((s) => `${s.method} ${s.url}`);
    for (const expected of [
      'POST /api/v1/translate',
      'POST /api/v1/judge',
      'POST /api/v1/playground',
      'POST /api/worker',
      'POST /api/retention',
      'GET /',
    ]) {
      expect(urls).toContain(expected);
    }
  });

  it('no credentials: 401 on every protected route, never on public ones', async () => {
    for (const spec of h.registry.specs) {
      const res = await call(spec, {});
      if (spec.security === 'none') expect(res.statusCode, spec.url).not.toBe(401);
      else {
        expect(res.statusCode, spec.url).toBe(401);
        expect(res.json()).toEqual({ error: 'missing or invalid credentials' });
      }
    }
  });

  it('wrong credentials: 401 (an API key is not a worker secret and vice versa)', async () => {
    const wrong = [
      bearer(`sk_live_${'0'.repeat(43)}`),
      bearer('garbage'),
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      bearer(''),
    ];
    for (const spec of h.registry.specs.filter((s) => s.security !== 'none')) {
      const others = spec.security === 'apiKey' ? [bearer(WORKER_SECRET)] : [bearer(apiKey)];
      for (const headers of [...wrong, ...others]) {
        const res = await call(spec, headers);
        expect(res.statusCode, `${spec.url} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
  });

  it('valid credentials: the route answers 200', async () => {
    for (const spec of h.registry.specs) {
      const headers =
        spec.security === 'apiKey' ? bearer(apiKey) : spec.security === 'workerSecret' ? bearer(WORKER_SECRET) : {};
      const res = await call(spec, headers);
      expect(res.statusCode, `${spec.method} ${spec.url}: ${res.body.slice(0, 200)}`).toBe(200);
    }
  });
});
