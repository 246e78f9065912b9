// The metrics registry (`app.metrics`), and one log line and the HTTP metrics per request. Logs hold method, route,
// status and duration: never bodies or headers.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Metrics } from '../context.ts';
import { createMetrics } from '../infra/metrics.ts';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

async function observability(app: FastifyInstance): Promise<void> {
  const metrics = createMetrics(app.config.metrics);
  app.decorate('metrics', metrics);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    metrics.httpRequests.inc({ route, method: request.method, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ route, method: request.method }, seconds);
    request.log.info(
      { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      'request',
    );
  });
}

export default fp(observability, { name: 'observability', fastify: '5.x', dependencies: ['settings'] });
