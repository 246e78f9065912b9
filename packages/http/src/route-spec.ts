// A route is its spec (schemas per status, auth, docs) plus a thin handler. The same specs drive fastify's
// validation and serialization and the OpenAPI 3.1 document, so the document cannot drift from the code.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { z } from 'zod';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omitted for non-JSON answers (an HTML page, a metrics text). */
  schema?: z.ZodType;
  contentType?: string;
  headers?: Record<string, { description: string; schema: { type: 'integer' | 'string' } }>;
}

export interface RouteSpec<
  B extends z.ZodType | undefined = z.ZodType | undefined,
  P extends z.ZodObject | undefined = z.ZodObject | undefined,
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** The name of one of the document's security schemes, or `none` for an open route. */
  security: string;
  body?: B;
  /** Path parameters (`:id` in the URL). */
  params?: P;
  /** Query-string parameters. */
  querystring?: Q;
  /** Media type of the request body when it is not JSON (a TMX upload); the body schema is then a string. */
  bodyContentType?: string;
  /** Request body may be absent (worker, retention). */
  bodyRequired?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Left out of the OpenAPI document (probes, metrics). */
  internal?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's spec (recorded by the OpenAPI plugin). */
    spec?: RouteSpec;
  }
}

export type Body<S> = S extends z.ZodType ? z.output<S> : undefined;

type Handler<B, P, Q> = (
  request: FastifyRequest & { body: Body<B>; params: Body<P>; query: Body<Q> },
  reply: FastifyReply,
) => Promise<unknown>;

/**
 * Registers `spec` on `app` with `handler`; `options` adds hooks (auth, rate limits), limits and route config.
 * Inside a route folder registered with a prefix, `spec.url` is relative to it (`''` is the prefix itself); the
 * OpenAPI plugin records the full path.
 * @example route(app, translateSpec, { onRequest: [app.authenticate.apiKey] }, async (req) => translate(app, req.body))
 */
export function route<
  B extends z.ZodType | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
>(app: FastifyInstance, spec: RouteSpec<B, P, Q>, options: RouteShorthandOptions, handler: Handler<B, P, Q>): void {
  const response: Record<number, z.ZodType> = {};
  for (const [status, r] of Object.entries(spec.responses)) if (r.schema) response[Number(status)] = r.schema;
  app.route({
    ...options,
    method: spec.method,
    url: spec.url,
    config: { ...options.config, spec: spec as RouteSpec },
    schema: {
      ...(spec.body ? { body: spec.body } : {}),
      ...(spec.params ? { params: spec.params } : {}),
      ...(spec.querystring ? { querystring: spec.querystring } : {}),
      response,
    },
    handler: handler as unknown as (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  });
}
