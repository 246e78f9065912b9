// What Node's HTTP parser refuses before fastify has a request: on a real socket, an `{error}` body too.
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorHandler, MAX_HEADER_BYTES } from '../src/framework-errors.ts';

let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  app = Fastify({ clientErrorHandler });
  app.get('/items', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => app.close());

describe('clientErrorHandler', () => {
  it('answers a URL over the header limit with 431 and {error}', async () => {
    const res = await fetch(`${base}/items?q=${'x'.repeat(MAX_HEADER_BYTES + 10)}`);
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({ error: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes` });
    expect((await fetch(`${base}/items`)).status).toBe(200);
  });
});
