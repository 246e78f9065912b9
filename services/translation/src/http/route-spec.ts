// A route is its spec (schemas per status, auth, docs) plus a thin handler. The same specs drive fastify's
// validation and serialization and the OpenAPI 3.1 document, so the document cannot drift from the code.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { z } from 'zod';

export type Security = 'apiKey' | 'workerSecret' | 'none';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; omitted for non-JSON answers (the HTML page). */
  schema?: z.ZodType;
  contentType?: string;
  headers?: Record<string, { description: string; schema: { type: 'integer' | 'string' } }>;
}

export interface RouteSpec<B extends z.ZodType | undefined = z.ZodType | undefined> {
  method: 'GET' | 'POST';
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Security;
  body?: B;
  /** Request body may be absent (worker, retention). */
  bodyRequired?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Left out of the OpenAPI document (probes, metrics, the document itself). */
  internal?: boolean;
}

export type Body<S> = S extends z.ZodType ? z.output<S> : undefined;

/** Every spec registered on any app, for the OpenAPI document. */
export interface RouteRegistry {
  specs: RouteSpec[];
}

type Handler<B extends z.ZodType | undefined> = (
  request: FastifyRequest & { body: Body<B> },
  reply: FastifyReply,
) => Promise<unknown>;

/**
 * Registers `spec` on `app` with `handler`; `options` adds hooks (auth, rate limits) and limits.
 * @example route(app, registry, translateSpec, { onRequest: [auth] }, async (req) => translate(req.body))
 */
export function route<B extends z.ZodType | undefined>(
  app: FastifyInstance,
  registry: RouteRegistry,
  spec: RouteSpec<B>,
  options: RouteShorthandOptions,
  handler: Handler<B>,
): void {
  registry.specs.push(spec as RouteSpec);
  const response: Record<number, z.ZodType> = {};
  for (const [status, r] of Object.entries(spec.responses)) if (r.schema) response[Number(status)] = r.schema;
  app.route({
    ...options,
    method: spec.method,
    url: spec.url,
    schema: { ...(spec.body ? { body: spec.body } : {}), response },
    handler: handler as unknown as (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  });
}
