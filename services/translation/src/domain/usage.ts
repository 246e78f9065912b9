// An organization's usage for the session API: the current quota period per UTC day, model and kind (from the usage
// events), against the plan's quota and today's budget cap (from the metering counters).
import type { AppContext } from '../context.ts';
import { ORG_LIMITS_COLUMNS, type OrgLimits, periodStart, utcDay } from './metering.ts';
import type { Actor } from './orgs.ts';
import { authorize } from './roles.ts';

const DAY_MS = 86_400_000;

export async function orgUsage(ctx: AppContext, actor: Actor, orgId: string) {
  await authorize(ctx.database, orgId, actor.userId, 'usage.read');
  const now = ctx.now();
  const [org] = await ctx.database.query<OrgLimits & { planId: string; planName: string }>(
    `SELECT o.id AS "orgId", ${ORG_LIMITS_COLUMNS}, p.id AS "planId", p.name AS "planName"
       FROM organizations o JOIN plans p ON p.id = o.plan_id WHERE o.id = $1`,
    [orgId],
  );
  const limits = org!;
  const start = periodStart(now, limits.periodDays);
  const end = new Date(Date.parse(`${start}T00:00:00Z`) + limits.periodDays * DAY_MS).toISOString().slice(0, 10);
  const day = utcDay(now);
  const [quota] = await ctx.database.query<{ used: number; reserved: number }>(
    'SELECT used_tokens AS used, reserved_tokens AS reserved FROM quota_usage WHERE org_id = $1 AND period_start = $2',
    [orgId, start],
  );
  const [budget] = await ctx.database.query<{ spent: number; reserved: number }>(
    'SELECT spent_micros AS spent, reserved_micros AS reserved FROM budget_usage WHERE scope = $1 AND day = $2',
    [`org:${orgId}`, day],
  );
  const days = await ctx.database.query<{
    day: string;
    model: string;
    kind: string;
    requests: number;
    tokensIn: number;
    tokensOut: number;
    costMicros: number;
  }>(
    `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, model, kind, count(*)::int AS requests,
            sum(tokens_in)::bigint AS "tokensIn", sum(tokens_out)::bigint AS "tokensOut",
            sum(cost_micros)::bigint AS "costMicros"
       FROM usage_events
      WHERE org_id = $1 AND created_at >= $2::date::timestamp AT TIME ZONE 'UTC'
      GROUP BY 1, model, kind ORDER BY 1, model, kind`,
    [orgId, start],
  );
  return {
    orgId,
    plan: { id: limits.planId, name: limits.planName },
    period: { start, end, days: limits.periodDays },
    quota: { tokens: limits.quotaTokens, used: quota?.used ?? 0, reserved: quota?.reserved ?? 0 },
    budget: {
      day,
      capMicros: limits.dailyBudgetMicros,
      spentMicros: budget?.spent ?? 0,
      reservedMicros: budget?.reserved ?? 0,
    },
    days,
  };
}
