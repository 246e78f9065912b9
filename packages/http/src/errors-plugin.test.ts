import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorBody, HttpError } from './errors.ts';
import { errors } from './errors-plugin.ts';
import { frameworkErrors, MAX_PARAM_LENGTH } from './framework-errors.ts';
import { openapi, serveOpenApi } from './openapi-plugin.ts';
import { route } from './route-spec.ts';
import { serializerCompiler, validatorCompiler } from './zod-compilers.ts';

async function build(): Promise<FastifyInstance> {
  const app = Fastify({
    frameworkErrors,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(errors, { quietCodes: ['queue_full'] });
  await app.register(openapi);
  const Item = z.object({ id: z.string().max(8) });
  route(
    app,
    {
      method: 'GET',
      url: '/items/:id',
      operationId: 'getItem',
      summary: 'one item',
      tags: ['t'],
      security: 'none',
      params: Item,
      responses: { 200: { description: 'the item', schema: Item }, 400: { description: 'bad', schema: ErrorBody } },
    },
    {},
    async (request) => {
      if (request.params.id === 'gone') throw new HttpError('not_found', 404, 'no such item', { 'x-why': 'gone' });
      if (request.params.id === 'boom') throw new Error('secret detail');
      return { id: request.params.id };
    },
  );
  route(
    app,
    {
      method: 'POST',
      url: '/items',
      operationId: 'addItem',
      summary: 'add',
      tags: ['t'],
      security: 'none',
      body: Item,
      responses: { 200: { description: 'added', schema: Item } },
    },
    {},
    async (request) => request.body,
  );
  serveOpenApi(app, '/openapi.json', { title: 't', version: '1', description: 'd', securitySchemes: {} });
  await app.ready();
  return app;
}

describe('the shared error handling', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await build();
  });
  afterAll(() => app.close());

  it('answers a wrong method on a known path with 405 and Allow, an unknown path with 404', async () => {
    const put = await app.inject({ method: 'PUT', url: '/items/a' });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD');
    expect(put.json()).toEqual({ error: expect.stringContaining('not allowed') });
    const get = await app.inject({ method: 'GET', url: '/items/' });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const unparsable = await app.inject({
      method: 'PATCH',
      url: '/items',
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect([unparsable.statusCode, unparsable.headers.allow]).toEqual([405, 'POST']);
    const none = await app.inject({ method: 'GET', url: '/nothing?x=1' });
    expect(none.statusCode).toBe(404);
    expect(none.json()).toEqual({ error: 'no route GET /nothing' });
  });

  it('answers an over-long path parameter with 414 and {error}, and declares it', async () => {
    const res = await app.inject({ method: 'GET', url: `/items/${'x'.repeat(MAX_PARAM_LENGTH + 1)}` });
    expect(res.statusCode).toBe(414);
    expect(res.json()).toEqual({ error: `a path parameter is longer than ${MAX_PARAM_LENGTH} characters` });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/items/{id}'].get.responses)).toEqual(['200', '400', '414', '431']);
  });

  it('turns validation, parsing and thrown errors into {error}, never echoing internals', async () => {
    const invalid = await app.inject({ method: 'GET', url: `/items/${'y'.repeat(9)}` });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toMatch(/^params\.id: /);
    const json = await app.inject({
      method: 'POST',
      url: '/items',
      payload: '{',
      headers: { 'content-type': 'application/json' },
    });
    expect(json.json()).toEqual({ error: 'invalid JSON body' });
    const gone = await app.inject({ method: 'GET', url: '/items/gone' });
    expect([gone.statusCode, gone.headers['x-why'], gone.json()]).toEqual([404, 'gone', { error: 'no such item' }]);
    const boom = await app.inject({ method: 'GET', url: '/items/boom' });
    expect([boom.statusCode, boom.json()]).toEqual([500, { error: 'internal error' }]);
  });
});
