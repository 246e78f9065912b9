// Collects the spec of every route registered with `route()` (src/http/route-spec.ts), with its full path (route
// folders are registered under a prefix), for the OpenAPI document.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { RouteSpec } from '../http/route-spec.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route spec, in registration order, `url` the full path. */
    routeSpecs: RouteSpec[];
  }
}

async function openapi(app: FastifyInstance): Promise<void> {
  const specs: RouteSpec[] = [];
  app.decorate('routeSpecs', specs);
  app.addHook('onRoute', (route) => {
    const spec = (route.config as { spec?: RouteSpec } | undefined)?.spec;
    if (spec && route.method !== 'HEAD') specs.push({ ...spec, url: route.url });
  });
}

export default fp(openapi, { name: 'openapi', fastify: '5.x' });
