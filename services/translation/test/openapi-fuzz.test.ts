// The API under an OpenAPI-driven fuzzer: schemathesis reads /api/v1/openapi.json and sends what it describes,
// valid and invalid, signed in with a session and with an API key (and the worker secret for the operations endpoints), to the app listening on loopback (real
// PostgreSQL, the pseudo provider). Every answer must be a status the document declares for the operation, with its
// headers and body schema; never a 5xx; a method a path does not have is 405 with Allow. Fixed seed, bounded examples.
import type { AddressInfo } from 'node:net';
import { fuzz } from '@scriptorium/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let base: string;
let headers: Record<string, string>;

beforeAll(async () => {
  // Limits far above what the run sends, so that the routes' logic is reached rather than their 429.
  const limits = [
    '/api/v1/translate',
    '/api/v1/judge',
    '/api/v1/playground',
    '/api/v1/keys',
    '/api/v1/orgs',
    '/api/v1/mfa',
    ...['/:id/members', '/:id/members/:userId', '/:id/invites/:inviteId', '/:id/memory.tmx'].map(
      (p) => `/api/v1/orgs${p}`,
    ),
  ];
  h = await startHarness({
    provider: 'pseudo',
    env: { RATE_LIMITS: JSON.stringify(limits.map((route) => ({ route, requestsPerMinute: 100_000 }))) },
  });
  const session = await h.signIn('fuzzer');
  const { apiKey } = await h.account();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  // The API-key routes read the bearer key, the session routes the cookie: one run covers both.
  headers = { authorization: `Bearer ${apiKey}`, cookie: session.cookie };
});

afterAll(async () => {
  await h?.close();
});

describe('the translation API under schemathesis', () => {
  it('answers only what its OpenAPI document declares', { timeout: 150_000 }, async () => {
    const result = await fuzz({
      schemaUrl: `${base}/api/v1/openapi.json`,
      baseUrl: base,
      headers,
      maxExamples: 10,
      // Signing out ends the session the rest of the run signs in with; deleting the account, the user.
      excludeOperationIds: ['signOut', 'privacyDelete'],
    });
    console.log(`schemathesis: ${result.summary}`);
    expect(result.ok, result.output).toBe(true);
    // The operations endpoints take the worker secret instead.
    const ops = await fuzz({
      schemaUrl: `${base}/api/v1/openapi.json`,
      baseUrl: base,
      headers: { authorization: `Bearer ${WORKER_SECRET}` },
      maxExamples: 10,
      includeOperationIds: ['worker', 'retention'],
    });
    console.log(`schemathesis (worker secret): ${ops.summary}`);
    expect(ops.ok, ops.output).toBe(true);
  });
});
