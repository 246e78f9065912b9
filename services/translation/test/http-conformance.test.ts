// What HTTP and the document say, beyond each route's own logic: a wrong method on a known path is 405 with Allow; an
// over-long path parameter is 414 and U+0000 anywhere in a request 400, both with the documented {error} body and
// both declared; item ids unique within a batch (400), which the document states.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, bearer, type Harness, type Session, startHarness } from './harness.ts';

let h: Harness;
let session: Session;
let apiKey: string;
beforeAll(async () => {
  h = await startHarness({ provider: 'pseudo', pglite: true });
  session = await h.signIn('conformance');
  ({ apiKey } = await h.account());
});
afterAll(async () => h?.close());

describe('HTTP conformance', () => {
  it('a wrong method on an existing path is 405 with Allow and {error}; an unknown path 404', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/translate', headers: bearer(apiKey) });
    expect([res.statusCode, res.headers.allow]).toEqual([405, 'POST']);
    expect(res.json()).toEqual({ error: expect.any(String) });
    const put = await h.call(session, 'PUT', '/api/v1/orgs/abc/members');
    expect([put.statusCode, put.headers.allow]).toEqual([405, 'GET, HEAD, POST']);
    expect((await h.app.inject({ method: 'GET', url: '/api/v1/nothing' })).statusCode).toBe(404);
  });

  it('an over-long path parameter is 414 {error}, declared on the routes with parameters', async () => {
    const res = await h.call(session, 'GET', `/api/v1/orgs/${'o'.repeat(300)}/members`);
    expect([res.statusCode, res.json()]).toEqual([414, { error: expect.any(String) }]);
    const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.paths['/api/v1/orgs/{id}/members'].get.responses['414'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
  });

  it('U+0000 in a body, a path or a query is 400 {error}, never a database error', async () => {
    const body = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orgs',
      headers: { cookie: session.cookie, 'content-type': 'application/json' },
      payload: '{"name":"a\\u0000b"}',
    });
    expect([body.statusCode, body.json()]).toEqual([400, { error: 'text must not contain U+0000' }]);
    const escaped = await h.app.inject({
      method: 'POST',
      url: '/api/v1/orgs',
      headers: { cookie: session.cookie, 'content-type': 'application/json' },
      payload: '{"name":"a\\\\u0000b"}',
    });
    expect(escaped.statusCode).toBe(200);
    for (const url of ['/api/v1/orgs/a%00b/members', '/api/v1/keys?orgId=%00']) {
      const res = await h.call(session, 'GET', url);
      expect([res.statusCode, res.json()], url).toEqual([400, { error: expect.any(String) }]);
    }
  });

  it('item ids are unique within a batch (400), and the document says so', async () => {
    const twice = batch(2);
    (twice.items as { id: string }[])[1]!.id = 's0';
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: twice,
    });
    expect([res.statusCode, res.json()]).toEqual([400, { error: expect.stringContaining('unique') }]);
    const doc = (await h.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const items = doc.paths['/api/v1/translate'].post.requestBody.content['application/json'].schema.properties.items;
    expect(items.description).toMatch(/unique/);
  });
});
