// Operations endpoints (no version prefix), called by the CronJobs through `trigger worker|retention`.
import type { FastifyInstance } from 'fastify';
import { type RouteRegistry, route } from '../../http/route-spec.ts';
import { workerSecretAuth } from '../../plugins/auth.ts';
import { rateLimit } from '../../plugins/rate-limit.ts';
import { RetentionResult, WorkerResult } from '../../schemas.ts';
import type { AppContext } from '../../services/context.ts';
import { drain, enqueue } from '../../services/jobs.ts';
import { judgeSampleHandler, usageRollupHandler } from '../../services/judging.ts';
import { utcDay } from '../../services/meter.ts';
import { enforceRetention } from '../../services/retention.ts';
import { r401, r429, rateLimitHeaders } from '../responses.ts';

export function opsRoutes(app: FastifyInstance, registry: RouteRegistry, ctx: AppContext): void {
  const auth = workerSecretAuth(ctx);
  // Per client IP, counted before the secret is checked: a caller guessing the secret is limited too.
  const limit = (url: string, name: string) =>
    rateLimit(
      ctx,
      url,
      [{ name, limit: ctx.config.rateLimits.perMinute[url] ?? 60, windowMs: 60_000 }],
      (req) => req.ip,
    );
  const handlers = { 'judge-sample': judgeSampleHandler(ctx), 'usage-rollup': usageRollupHandler(ctx) };

  route(
    app,
    registry,
    {
      method: 'POST',
      url: '/api/worker',
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
    { onRequest: [limit('/api/worker', 'worker:ip'), auth] },
    async () => {
      // Every live reservation settles within one upstream timeout: far older ones belong to a dead process.
      const released = await ctx.meter.releaseOrphans(2 * ctx.config.provider.timeoutMs + 60_000);
      if (released > 0) ctx.logger.warn({ rows: released }, 'orphaned metering reservations released');
      const yesterday = utcDay(ctx.now() - 86_400_000);
      await enqueue(
        ctx.database,
        'usage-rollup',
        { day: yesterday },
        {
          maxAttempts: ctx.config.jobs.maxAttempts,
          dedupeKey: `usage-rollup:${yesterday}`,
        },
      );
      const result = await drain(ctx.database, handlers, {
        ...ctx.config.jobs,
        maxJobs: ctx.config.jobs.drainMaxJobs,
        maxMs: ctx.config.jobs.drainMaxMs,
        onError: (job, error) => {
          ctx.metrics.jobs.inc({ kind: job.kind, outcome: 'failed' });
          ctx.logger.warn(
            {
              job: job.id,
              kind: job.kind,
              attempt: job.attempts,
              error: error instanceof Error ? error.name : 'error',
            },
            'job failed',
          );
        },
      });
      ctx.metrics.jobs.inc({ kind: 'all', outcome: 'processed' }, result.processed);
      return { processed: result.processed, failed: result.failed };
    },
  );

  route(
    app,
    registry,
    {
      method: 'POST',
      url: '/api/retention',
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
    { onRequest: [limit('/api/retention', 'retention:ip'), auth] },
    async () => enforceRetention(ctx.database, ctx.config.retentionDays, ctx.now()),
  );
}
