import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ErrorBody } from './errors.ts';
import { buildOpenApi, type OpenApiInfo } from './openapi.ts';
import type { RouteSpec } from './route-spec.ts';

describe('buildOpenApi', () => {
  const info: OpenApiInfo = {
    title: 't',
    version: '1.0.0',
    description: 'd',
    securitySchemes: { apiKey: { type: 'http', scheme: 'bearer' } },
  };
  const spec: RouteSpec = {
    method: 'POST',
    url: '/x',
    operationId: 'x',
    summary: 'x',
    tags: ['t'],
    security: 'apiKey',
    body: z.object({ a: z.string(), b: z.string().default('en') }),
    responses: {
      200: { description: 'ok', schema: z.object({ n: z.int() }) },
      401: { description: 'no', schema: ErrorBody },
    },
  };

  it('uses input schemas for requests (defaults optional) and output schemas for responses', () => {
    const doc = buildOpenApi([spec, { ...spec, url: '/internal', internal: true }], info) as {
      openapi: string;
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(['/x']);
    const op = doc.paths['/x']!.post as {
      requestBody: { content: { 'application/json': { schema: { required: string[] } } } };
      responses: Record<string, { content: { 'application/json': { schema: Record<string, unknown> } } }>;
      security: unknown;
    };
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['a']);
    expect(op.responses['401']!.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(op.responses['200']!.content['application/json'].schema).toMatchObject({
      properties: { n: { type: 'integer' } },
    });
    expect(op.security).toEqual([{ apiKey: [] }]);
  });

  it('declares what the shared layer answers (400, 414, the body responses), and refuses an unknown scheme', () => {
    const withParams: RouteSpec = { ...spec, url: '/x/:id', params: z.object({ id: z.string() }) };
    const plain: RouteSpec = { ...spec, url: '/y', body: undefined };
    const r415 = { description: 'not JSON', schema: ErrorBody };
    const doc = buildOpenApi([withParams, plain], { ...info, bodyResponses: { 415: r415 } }) as {
      paths: Record<string, { post: { responses: object } }>;
    };
    expect(Object.keys(doc.paths['/x/{id}']!.post.responses)).toEqual(['200', '400', '401', '414', '415', '431']);
    expect(Object.keys(doc.paths['/y']!.post.responses)).toEqual(['200', '401']);
    expect(() => buildOpenApi([{ ...spec, security: 'session' }], info)).toThrow(/no security scheme named session/);
  });

  it('hoists the definitions zod makes for recursive schemas into components, where references reach them', () => {
    const json: RouteSpec = {
      ...spec,
      responses: { 200: { description: 'any JSON', schema: z.object({ v: z.json() }) } },
    };
    const doc = buildOpenApi([json, { ...json, url: '/y' }], info) as {
      paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: object }> }> } }>;
      components: { schemas: Record<string, unknown> };
    };
    const text = JSON.stringify(doc);
    expect(text).not.toContain('#/$defs/');
    const refs = [...text.matchAll(/"#\/components\/schemas\/(\w+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(doc.components.schemas[ref as string]).toBeDefined();
    expect(Object.keys(doc.components.schemas)).toHaveLength(2);
  });
});
