import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApi } from './openapi.ts';
import type { RouteSpec } from './route-spec.ts';
import { ErrorBody } from './schemas.ts';

describe('buildOpenApi', () => {
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
    const doc = buildOpenApi([spec, { ...spec, url: '/internal', internal: true }]) as {
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
});
