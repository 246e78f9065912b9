// Collects the spec of every route registered with `route()` (route-spec.ts), with its full path (route folders are
// registered under a prefix), for the OpenAPI document; `serveOpenApi` declares the route that answers it.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { buildOpenApi, type OpenApiInfo } from './openapi.ts';
import { type RouteSpec, route } from './route-spec.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route spec, in registration order, `url` the full path. */
    routeSpecs: RouteSpec[];
  }
}

async function openapiCollector(app: FastifyInstance): Promise<void> {
  const specs: RouteSpec[] = [];
  app.decorate('routeSpecs', specs);
  app.addHook('onRoute', (r) => {
    const spec = (r.config as { spec?: RouteSpec } | undefined)?.spec;
    if (spec && r.method !== 'HEAD') specs.push({ ...spec, url: r.url });
  });
}

/**
 * The collector: register it before the routes.
 * @example await app.register(openapi); … serveOpenApi(app, '/openapi.json', info);
 */
export const openapi = fp(openapiCollector, { name: 'openapi', fastify: '5.x' });

/**
 * Declares `GET url`, answering the document of every route spec the collector recorded (built once, on the first
 * request, when every route is registered).
 * @example serveOpenApi(app, '/api/v1/openapi.json', { title: 'Translation', version: '1.0.0', description: '…', securitySchemes });
 */
export function serveOpenApi(app: FastifyInstance, url: string, info: OpenApiInfo, tags: string[] = ['meta']): void {
  let document: string | undefined;
  route(
    app,
    {
      method: 'GET',
      url,
      operationId: 'openapi',
      summary: 'This OpenAPI 3.1 document',
      tags,
      security: 'none',
      responses: { 200: { description: 'OpenAPI 3.1 document', contentType: 'application/json' } },
    },
    {},
    async (_request, reply) => {
      document ??= JSON.stringify(buildOpenApi(app.routeSpecs, info));
      return reply.header('content-type', 'application/json; charset=utf-8').send(document);
    },
  );
}
