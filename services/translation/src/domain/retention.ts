// Retention: deletes what is past its configured period, per category, and reports the counts.
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { RetentionResult } from '../http/schemas.ts';

type Category = keyof RetentionResult['deleted'];

const DAY_MS = 86_400_000;
/** Wraps a DELETE so it returns the number of rows deleted. */
const counted = (del: string) => `WITH d AS (${del} RETURNING 1) SELECT count(*)::int AS n FROM d`;

/** One statement per category: its SQL (returning `n`) and its parameters. */
function statements(days: Config['retentionDays'], now: number, idleMs: number): [Category, string, unknown[]][] {
  const cutoff = (d: number) => new Date(now - d * DAY_MS).toISOString();
  const cutoffDay = (d: number) => cutoff(d).slice(0, 10);
  const nowIso = new Date(now).toISOString();
  return [
    ['usageEvents', counted('DELETE FROM usage_events WHERE created_at < $1'), [cutoff(days.usageEvents)]],
    ['usageDaily', counted('DELETE FROM usage_daily WHERE day < $1::date'), [cutoffDay(days.usageDaily)]],
    [
      'finishedJobs',
      counted(`DELETE FROM jobs WHERE status IN ('done', 'dead') AND finished_at < $1`),
      [cutoff(days.finishedJobs)],
    ],
    ['reviewItems', counted('DELETE FROM review_items WHERE created_at < $1'), [cutoff(days.reviewItems)]],
    ['auditLog', counted('DELETE FROM audit_log WHERE at < $1'), [cutoff(days.auditLog)]],
    ['billingEvents', counted('DELETE FROM billing_events WHERE received_at < $1'), [cutoff(days.billingEvents)]],
    [
      'meteringCounters',
      `WITH q AS (DELETE FROM quota_usage WHERE period_start < $1::date AND reserved_tokens = 0 RETURNING 1),
            b AS (DELETE FROM budget_usage WHERE day < $1::date AND reserved_micros = 0 RETURNING 1)
       SELECT ((SELECT count(*) FROM q) + (SELECT count(*) FROM b))::int AS n`,
      [cutoffDay(days.meteringCounters)],
    ],
    [
      // Deleting entries is a change of the memory: the organizations' generations move first (their rows locked
      // before their entries, as a store does), which leaves their file answers to the next statement.
      'memoryEntries',
      `WITH o AS (UPDATE organizations SET memory_generation = memory_generation + 1
                   WHERE id IN (SELECT org_id FROM translation_memory WHERE last_used_at < $1) RETURNING id),
            d AS (DELETE FROM translation_memory m USING o WHERE m.org_id = o.id AND m.last_used_at < $1 RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [cutoff(days.memoryEntries)],
    ],
    [
      'memoryFileAnswers',
      counted(`DELETE FROM translation_memory_files f USING organizations o
                WHERE o.id = f.org_id AND (f.last_used_at < $1 OR f.generation <> o.memory_generation)`),
      [cutoff(days.memoryEntries)],
    ],
    // Windows whose end has passed can never count again.
    ['rateLimitWindows', counted('DELETE FROM rate_limit_windows WHERE window_start + window_ms < $1'), [now]],
    [
      'expiredSessions',
      counted('DELETE FROM sessions WHERE expires_at < $1 OR last_seen_at < $2'),
      [nowIso, new Date(now - idleMs).toISOString()],
    ],
    ['expiredInvites', counted('DELETE FROM invites WHERE expires_at < $1 AND accepted_at IS NULL'), [nowIso]],
  ];
}

/**
 * Applies every retention period; the counts are rows deleted per category.
 * Sessions end at their absolute expiry or when idle for `sessionIdleMs`.
 * @example const { deleted } = await enforceRetention(db, config.retentionDays, Date.now(), config.session.idleMs);
 */
export async function enforceRetention(
  database: Database,
  days: Config['retentionDays'],
  now: number,
  sessionIdleMs = Number.POSITIVE_INFINITY,
): Promise<RetentionResult> {
  const deleted = {} as RetentionResult['deleted'];
  for (const [category, sql, params] of statements(days, now, Math.min(sessionIdleMs, now))) {
    const [row] = await database.query<{ n: number }>(sql, params);
    deleted[category] = Number(row?.n ?? 0);
  }
  return { deleted };
}
