// The job queue: a PostgreSQL table claimed with FOR UPDATE SKIP LOCKED, so replicas and concurrent
// drains never run the same job twice. A failed job is retried with exponential backoff until
// `max_attempts`, then marked dead. A finished job's payload is scrubbed (it may hold sampled text).

import type { Database } from '../db/index.ts';
import type { Job as JobRow } from '../db/schema.ts';

/** A claimed job (its row's fields a handler needs). */
export type Job = Pick<JobRow, 'id' | 'kind' | 'payload' | 'attempts' | 'maxAttempts'>;

export type JobHandler = (payload: unknown, job: Job) => Promise<void>;

export interface QueueOptions {
  maxAttempts: number;
  backoffBaseMs: number;
  lockMs: number;
}

/** Adds a job; with `dedupeKey`, at most one job with that key is ever enqueued. Returns whether it was added. */
export async function enqueue(
  database: Database,
  kind: string,
  payload: unknown,
  opts: { maxAttempts: number; dedupeKey?: string; runAt?: Date },
): Promise<boolean> {
  const rows = await database.query(
    `INSERT INTO jobs (kind, payload, max_attempts, dedupe_key, run_at) VALUES ($1, $2, $3, $4, COALESCE($5, now()))
     ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
    [kind, JSON.stringify(payload), opts.maxAttempts, opts.dedupeKey ?? null, opts.runAt?.toISOString() ?? null],
  );
  return rows.length > 0;
}

/** Claims up to `limit` ready jobs (queued and due, or running with an expired lock). */
export async function claim(database: Database, limit: number, lockMs: number): Promise<Job[]> {
  const rows = await database.query<Job>(
    `UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = now() + make_interval(secs => $2::float8 / 1000)
      WHERE id IN (
        SELECT id FROM jobs
         WHERE (status = 'queued' AND run_at <= now()) OR (status = 'running' AND locked_until < now())
         ORDER BY run_at, id
         LIMIT $1
         FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, payload, attempts, max_attempts AS "maxAttempts"`,
    [limit, lockMs],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind,
    payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    attempts: r.attempts,
    maxAttempts: r.maxAttempts,
  }));
}

/** Delay before attempt `attempts + 1`: base · 2^(attempts−1), capped at one day. */
export const backoffMs = (attempts: number, baseMs: number): number =>
  Math.min(baseMs * 2 ** Math.max(0, attempts - 1), 86_400_000);

/** Error text kept on a failed job: the error class and a bounded message, never payload content. */
const errorSummary = (error: unknown): string =>
  (error instanceof Error ? `${error.name}: ${error.message}` : 'non-error thrown').slice(0, 300);

async function finish(
  database: Database,
  job: Job,
  error: unknown,
  opts: QueueOptions,
): Promise<'done' | 'retry' | 'dead'> {
  if (error === undefined) {
    await database.query(
      `UPDATE jobs SET status = 'done', finished_at = now(), locked_until = NULL, payload = '{}'::jsonb, last_error = NULL WHERE id = $1`,
      [job.id],
    );
    return 'done';
  }
  if (job.attempts >= job.maxAttempts) {
    await database.query(
      `UPDATE jobs SET status = 'dead', finished_at = now(), locked_until = NULL, payload = '{}'::jsonb, last_error = $2 WHERE id = $1`,
      [job.id, errorSummary(error)],
    );
    return 'dead';
  }
  await database.query(
    `UPDATE jobs SET status = 'queued', locked_until = NULL, last_error = $2,
            run_at = now() + make_interval(secs => $3::float8 / 1000) WHERE id = $1`,
    [job.id, errorSummary(error), backoffMs(job.attempts, opts.backoffBaseMs)],
  );
  return 'retry';
}

export interface DrainResult {
  processed: number;
  failed: number;
  dead: number;
}

/**
 * Runs ready jobs until none is left, or `maxJobs` ran, or `maxMs` passed.
 * @example const { processed, failed } = await drain(db, handlers, { ...opts, maxJobs: 500, maxMs: 20_000 });
 */
export async function drain(
  database: Database,
  handlers: Record<string, JobHandler>,
  opts: QueueOptions & { maxJobs: number; maxMs: number; onError?: (job: Job, error: unknown) => void },
): Promise<DrainResult> {
  const started = Date.now();
  const result: DrainResult = { processed: 0, failed: 0, dead: 0 };
  let ran = 0;
  while (ran < opts.maxJobs && Date.now() - started < opts.maxMs) {
    const batch = await claim(database, Math.min(10, opts.maxJobs - ran), opts.lockMs);
    if (batch.length === 0) break;
    for (const job of batch) {
      ran++;
      let error: unknown;
      try {
        const handler = handlers[job.kind];
        if (!handler) throw new Error(`no handler for job kind ${job.kind}`);
        await handler(job.payload, job);
      } catch (e) {
        error = e ?? new Error('job failed');
        opts.onError?.(job, error);
      }
      const outcome = await finish(database, job, error, opts);
      if (outcome === 'done') result.processed++;
      else {
        result.failed++;
        if (outcome === 'dead') result.dead++;
      }
    }
  }
  return result;
}
