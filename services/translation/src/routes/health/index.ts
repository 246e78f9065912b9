// Probes, metrics and the OpenAPI document.

import { route, serveOpenApi } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { migrationStatus } from '../../db/index.ts';
import { OPENAPI_INFO } from '../../http/openapi.ts';
import { ErrorBody } from '../../http/schemas.ts';

const Status = z.object({ status: z.string() });

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'GET',
      url: '/healthz',
      operationId: 'healthz',
      summary: 'Liveness',
      tags: ['operations'],
      security: 'none',
      internal: true,
      responses: { 200: { description: 'alive', schema: Status } },
    },
    {},
    async () => ({ status: 'ok' }),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/readyz',
      operationId: 'readyz',
      summary: 'Readiness: database reachable and migrations applied',
      tags: ['operations'],
      security: 'none',
      internal: true,
      responses: {
        200: { description: 'ready', schema: Status },
        503: { description: 'not ready', schema: ErrorBody },
      },
    },
    {},
    async (_request, reply) => {
      try {
        const status = await migrationStatus(app.database);
        if (status.pending.length > 0) {
          return reply.code(503).send({ error: `migrations pending: ${status.pending.join(', ')}` });
        }
        return { status: 'ready' };
      } catch {
        return reply.code(503).send({ error: 'database unreachable' });
      }
    },
  );

  if (app.config.metrics) {
    app.get('/metrics', async (_request, reply) => {
      reply.header('content-type', app.metrics.registry.contentType);
      return app.metrics.registry.metrics();
    });
  }

  serveOpenApi(app, '/api/v1/openapi.json', OPENAPI_INFO);
}
