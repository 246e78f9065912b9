// One run of the worker (POST /api/worker, called by the worker CronJob): release orphaned metering reservations,
// enqueue yesterday's usage rollup (once), then drain the job queue within the run's bounds.
import type { AppContext } from '../context.ts';
import { drain, enqueue } from '../infra/jobs.ts';
import { judgeSampleHandler, usageRollupHandler } from './judging.ts';
import { utcDay } from './metering.ts';

/**
 * Runs the worker once; returns the jobs processed and failed in this run.
 * @example const { processed, failed } = await runWorker(app);
 */
export async function runWorker(ctx: AppContext): Promise<{ processed: number; failed: number }> {
  // Every live reservation settles within one upstream timeout: far older ones belong to a dead process.
  const released = await ctx.meter.releaseOrphans(2 * ctx.config.provider.timeoutMs + 60_000);
  if (released > 0) ctx.log.warn({ rows: released }, 'orphaned metering reservations released');
  const yesterday = utcDay(ctx.now() - 86_400_000);
  await enqueue(
    ctx.database,
    'usage-rollup',
    { day: yesterday },
    { maxAttempts: ctx.config.jobs.maxAttempts, dedupeKey: `usage-rollup:${yesterday}` },
  );
  const handlers = { 'judge-sample': judgeSampleHandler(ctx), 'usage-rollup': usageRollupHandler(ctx) };
  const result = await drain(ctx.database, handlers, {
    ...ctx.config.jobs,
    maxJobs: ctx.config.jobs.drainMaxJobs,
    maxMs: ctx.config.jobs.drainMaxMs,
    onError: (job, error) => {
      ctx.metrics.jobs.inc({ kind: job.kind, outcome: 'failed' });
      ctx.log.warn(
        { job: job.id, kind: job.kind, attempt: job.attempts, error: error instanceof Error ? error.name : 'error' },
        'job failed',
      );
    },
  });
  ctx.metrics.jobs.inc({ kind: 'all', outcome: 'processed' }, result.processed);
  return { processed: result.processed, failed: result.failed };
}
