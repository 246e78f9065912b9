// Builds the OpenAPI 3.1 document from the registered route specs (zod 4 → JSON Schema 2020-12).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { ErrorBody } from './errors.ts';
import { MAX_HEADER_BYTES, MAX_PARAM_LENGTH } from './framework-errors.ts';
import type { ResponseSpec, RouteSpec } from './route-spec.ts';

/** What a service's document says about itself besides its routes. */
export interface OpenApiInfo {
  title: string;
  version: string;
  description: string;
  /** The security schemes a route's `security` names (OpenAPI `components.securitySchemes`). */
  securitySchemes: Record<string, Record<string, unknown>>;
  /**
   * What every route with a request body may also answer, from fastify's body handling as the service maps it
   * (e.g. 413 above the body limit, 415 for a media type other than JSON), unless the route declares the status.
   */
  bodyResponses?: Record<number, ResponseSpec>;
  serverUrl?: string;
}

/** The answer every route with path parameters may give (framework-errors.ts), declared on each of them. */
const PARAM_TOO_LONG: ResponseSpec = {
  description: `a path parameter longer than ${MAX_PARAM_LENGTH} characters`,
  schema: ErrorBody,
};
/** Node's answer to a URL too long for it (framework-errors.ts), on every route whose URL carries parameters or a query. */
const URL_TOO_LONG: ResponseSpec = {
  description: `the request line and headers exceed ${MAX_HEADER_BYTES} bytes`,
  schema: ErrorBody,
};
/** The answer of the validator compiler (zod-compilers.ts) on every route with a params, query or body schema. */
const INVALID_REQUEST: ResponseSpec = {
  description: 'a path parameter, the query or the body does not match its schema',
  schema: ErrorBody,
};

/** The route's own responses, and what the shared layer answers on its behalf where the route does not say. */
function declaredResponses(spec: RouteSpec, info: OpenApiInfo): Record<number, ResponseSpec> {
  const implied: Record<number, ResponseSpec> = {};
  if (spec.params || spec.querystring || spec.body) implied[400] = INVALID_REQUEST;
  if (spec.body) Object.assign(implied, info.bodyResponses);
  if (spec.params) implied[414] = PARAM_TOO_LONG;
  if (spec.params || spec.querystring) implied[431] = URL_TOO_LONG;
  // Integer keys iterate in ascending order: the statuses stay sorted.
  return { ...implied, ...spec.responses };
}

/** OpenAPI parameters of a zod object (path or query). */
function parametersOf(
  schema: z.ZodObject | undefined,
  where: 'path' | 'query',
  definitions: Definitions,
): Record<string, unknown>[] {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input', definitions) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, s]) => {
    // A schema's first example (zod `.meta({ examples })`) is the parameter's example, which clients and fuzzers use.
    const examples = (s as { examples?: unknown[] }).examples;
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      schema: s,
      ...(examples?.length ? { example: examples[0] } : {}),
    };
  });
}

/**
 * Shared definitions hoisted out of the per-schema JSON Schemas (zod puts a recursive schema such as z.json() in a
 * `$defs` of its own output, which a `#/$defs/…` reference inside an OpenAPI document cannot reach), named by content.
 */
type Definitions = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output', definitions?: Definitions): Record<string, unknown> {
  const {
    $schema: _drop,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  if (!$defs || !definitions) return rest;
  const renamed = new Map<string, string>();
  for (const [name, def] of Object.entries($defs as Record<string, unknown>)) {
    renamed.set(name, `Def${createHash('sha256').update(JSON.stringify(def)).digest('hex').slice(0, 10)}`);
  }
  const rewrite = (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value), (key, v) =>
      key === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')
        ? `#/components/schemas/${renamed.get(v.slice('#/$defs/'.length)) ?? v}`
        : v,
    );
  for (const [name, def] of Object.entries($defs as Record<string, unknown>)) {
    definitions[renamed.get(name) as string] = rewrite(def);
  }
  return rewrite(rest) as Record<string, unknown>;
}

function responseObject(r: ResponseSpec, definitions: Definitions): Record<string, unknown> {
  return {
    description: r.description,
    ...(r.headers ? { headers: r.headers } : {}),
    ...(r.schema
      ? {
          content: {
            [r.contentType ?? 'application/json']: {
              schema:
                r.schema === ErrorBody
                  ? { $ref: '#/components/schemas/Error' }
                  : jsonSchema(r.schema, 'output', definitions),
            },
          },
        }
      : r.contentType
        ? { content: { [r.contentType]: { schema: { type: 'string' } } } }
        : {}),
  };
}

/**
 * The OpenAPI 3.1 document of `specs`. Each route also declares what the shared layer answers for it where the route
 * does not: 400 when it has a params, query or body schema, 414 when it has path parameters (a parameter over the
 * router's limit), 431 when its URL carries parameters or a query (a URL over Node's limit), and
 * `info.bodyResponses` when it takes a body.
 * @example const doc = buildOpenApi(app.routeSpecs, { title: 'Ledger node', version: '2.0.0', description: '…', securitySchemes: {} });
 */
export function buildOpenApi(specs: RouteSpec[], info: OpenApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const definitions: Definitions = {};
  for (const spec of specs) {
    if (spec.internal) continue;
    if (spec.security !== 'none' && !(spec.security in info.securitySchemes)) {
      throw new Error(`${spec.operationId}: no security scheme named ${spec.security}`);
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(declaredResponses(spec, info))) {
      responses[status] = responseObject(r, definitions);
    }
    const parameters = [
      ...parametersOf(spec.params, 'path', definitions),
      ...parametersOf(spec.querystring, 'query', definitions),
    ];
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
              content: {
                [spec.bodyContentType ?? 'application/json']: { schema: jsonSchema(spec.body, 'input', definitions) },
              },
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
    info: { title: info.title, version: info.version, description: info.description },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      schemas: { Error: jsonSchema(ErrorBody, 'output'), ...definitions },
      securitySchemes: info.securitySchemes,
    },
  };
}
