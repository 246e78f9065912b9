// The signed-in home: the selected organization's usage in the current period — tokens against the plan's quota,
// today's spend against the daily budget cap — and per day and model as charts with those limits marked.
import { useEffect } from 'preact/hooks';
import { usage as fetchUsage } from '../api/endpoints.ts';
import { BarChart } from '../components/bar-chart.tsx';
import { LoadState } from '../components/load-state.tsx';
import { NoOrg } from '../components/no-org.tsx';
import { buildSeries, daysBetween } from '../lib/chart.ts';
import { formatDay, formatInt, formatMicros, percent } from '../lib/format.ts';
import { markInteractive } from '../lib/timing.ts';
import { useOrgResource } from '../lib/use-resource.ts';
import { useSession } from '../session.tsx';

function Gauge({
  label,
  used,
  reserved,
  limit,
  format,
}: {
  label: string;
  used: number;
  reserved: number;
  limit: number;
  format: (n: number) => string;
}) {
  const share = percent(used + reserved, limit);
  const shown = share === 0 && used + reserved > 0 ? '< 1' : String(share);
  return (
    <div class="gauge">
      <p class="gauge-label">
        <strong>{label}</strong>: {format(used)} of {format(limit)} ({shown} %)
        {reserved > 0 ? `, ${format(reserved)} reserved by calls in flight` : ''}
      </p>
      <progress max={limit || 1} value={Math.min(used + reserved, limit || 1)} aria-label={label}>
        {shown} %
      </progress>
    </div>
  );
}

export function Usage() {
  const session = useSession();
  const org = session.org;
  const orgId = org?.id ?? '';
  const resource = useOrgResource(org?.id, fetchUsage, undefined);
  const u = resource.data;
  useEffect(() => {
    if (!orgId || u) markInteractive();
  }, [orgId, u]);
  if (!org) {
    return (
      <>
        <h1>Welcome, {session.me.name ?? session.me.email}</h1>
        <NoOrg />
      </>
    );
  }
  const today = new Date().toISOString().slice(0, 10);
  const days = u ? daysBetween(u.period.start, u.period.end < today ? u.period.end : today) : [];
  return (
    <>
      <h1>{org.name}: usage</h1>
      <LoadState resource={resource} what="the usage" />
      {u && (
        <>
          <p class="muted">
            Plan <strong>{u.plan.name}</strong>; period {formatDay(u.period.start)} – {formatDay(u.period.end)} (
            {u.period.days} days).
          </p>
          <div class="gauges">
            <Gauge
              label="Tokens this period"
              used={u.quota.used}
              reserved={u.quota.reserved}
              limit={u.quota.tokens}
              format={formatInt}
            />
            <Gauge
              label={`Spend today (${formatDay(u.budget.day)})`}
              used={u.budget.spentMicros}
              reserved={u.budget.reservedMicros}
              limit={u.budget.capMicros}
              format={formatMicros}
            />
          </div>
          <BarChart
            title="Tokens used in the period, cumulative, by model"
            series={buildSeries(u.days, days, 'tokens', true)}
            limit={u.quota.tokens}
            limitLabel="Plan quota"
            format={formatInt}
          />
          <BarChart
            title="Spend per day, by model"
            series={buildSeries(u.days, days, 'cost', false)}
            limit={u.budget.capMicros}
            limitLabel="Daily budget cap"
            format={formatMicros}
          />
        </>
      )}
    </>
  );
}
