// Operations endpoints (no version prefix; registered under /api), called by the CronJobs through
// `trigger worker|retention`.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { enforceRetention } from '../../domain/retention.ts';
import { runWorker } from '../../domain/worker.ts';
import { RetentionResult, WorkerResult } from '../../http/schemas.ts';
import { r401, r429, rateLimitHeaders } from '../responses.ts';

export default async function opsRoutes(app: FastifyInstance): Promise<void> {
  const auth = app.authenticate.workerSecret;
  // Per client IP, counted before the secret is checked: a caller guessing the secret is limited too.
  const limit = (path: string, name: string) => {
    const url = `${app.prefix}${path}`;
    return app.rateLimits.hook(
      url,
      [{ name, limit: app.rateLimits.perMinute(url, 60), windowMs: 60_000 }],
      (req) => req.ip,
    );
  };

  route(
    app,
    {
      method: 'POST',
      url: '/worker',
      operationId: 'worker',
      summary: 'Drain the job queue',
      description:
        'Releases metering reservations orphaned by a dead process, enqueues the usage rollup of the previous UTC day ' +
        '(once), then runs ready jobs until none is left or the ' +
        'run’s bounds are reached. Failed jobs are retried later with exponential backoff, and are dead after a bounded ' +
        'number of attempts.',
      tags: ['operations'],
      security: 'workerSecret',
      responses: {
        200: { description: 'processed and failed counts', schema: WorkerResult, headers: rateLimitHeaders },
        401: r401,
        429: r429,
      },
    },
    { onRequest: [limit('/worker', 'worker:ip'), auth] },
    async () => runWorker(app),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/retention',
      operationId: 'retention',
      summary: 'Enforce data retention',
      description: 'Deletes what is past its configured period and returns the deleted counts per category.',
      tags: ['operations'],
      security: 'workerSecret',
      responses: {
        200: { description: 'deleted counts per category', schema: RetentionResult, headers: rateLimitHeaders },
        401: r401,
        429: r429,
      },
    },
    { onRequest: [limit('/retention', 'retention:ip'), auth] },
    async () => enforceRetention(app.database, app.config.retentionDays, app.now(), app.config.session.idleMs),
  );
}
