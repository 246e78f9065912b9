// Builds the OpenAPI 3.1 document from the registered route specs (zod 4 → JSON Schema 2020-12).
import { z } from 'zod';
import type { RouteSpec } from './route-spec.ts';
import { ErrorBody } from './schemas.ts';

export const API_VERSION = '1.0.0';

/** OpenAPI parameters of a zod object (path or query). */
function parametersOf(schema: z.ZodObject | undefined, where: 'path' | 'query'): Record<string, unknown>[] {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (json.required ?? []).includes(name),
    schema: s,
  }));
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/**
 * The OpenAPI 3.1 document of `specs`.
 * @example const doc = buildOpenApi(app.routeSpecs, 'https://translate.example.com');
 */
export function buildOpenApi(specs: RouteSpec[], serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of specs) {
    if (spec.internal) continue;
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      const isError = r.schema === ErrorBody;
      responses[status] = {
        description: r.description,
        ...(r.headers ? { headers: r.headers } : {}),
        ...(r.schema
          ? {
              content: {
                [r.contentType ?? 'application/json']: {
                  schema: isError ? { $ref: '#/components/schemas/Error' } : jsonSchema(r.schema, 'output'),
                },
              },
            }
          : r.contentType
            ? { content: { [r.contentType]: { schema: { type: 'string' } } } }
            : {}),
      };
    }
    const parameters = [...parametersOf(spec.params, 'path'), ...parametersOf(spec.querystring, 'query')];
    const operation: Record<string, unknown> = {
      operationId: spec.operationId,
      summary: spec.summary,
      ...(spec.description ? { description: spec.description } : {}),
      tags: spec.tags,
      security: spec.security === 'none' ? [] : [{ [spec.security]: [] }],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(spec.body
        ? {
            requestBody: {
              required: spec.bodyRequired !== false,
              content: { [spec.bodyContentType ?? 'application/json']: { schema: jsonSchema(spec.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
    const path = spec.url.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    (paths[path] as Record<string, unknown>)[spec.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Scriptorium translation service',
      version: API_VERSION,
      description:
        'Metered translation proxy: translation, quality judging, a public capped playground, GitHub sign-in and the ' +
        'session API (organizations, members, API keys, reviews, MFA, privacy), the billing webhook and operations endpoints.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description: 'Authorization: Bearer <API_KEY> (sk_live_…)',
        },
        workerSecret: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <WORKER_SECRET>' },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: 'session-token',
          description:
            'The session cookie set by GET /auth/github/callback after GitHub sign-in. State-changing requests must come ' +
            'from the service’s own origin (Origin/Referer) or from no browser.',
        },
        providerSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'Stripe-Signature',
          description: 't=<timestamp>,v1=<HMAC-SHA256 of "t." + raw body, hex> (several v1 accepted; 300 s tolerance)',
        },
      },
    },
  };
}
