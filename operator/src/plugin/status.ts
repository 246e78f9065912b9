// `kubectl scriptorium status CLUSTER`: one screen with what an SRE asks first about a LedgerCluster.
import type { LedgerCluster } from '../api/index.ts';
import type { KubeObject } from '../kube/types.ts';

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** "2h", "5m", "12s": how long ago `time` was, as kubectl prints ages. */
export function age(time: string | undefined, now: Date): string {
  const at = time ? Date.parse(time) : Number.NaN;
  if (!Number.isFinite(at)) return '?';
  const s = Math.max(0, Math.floor((now.getTime() - at) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** Left-aligned columns, two spaces apart. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [header, ...rows].map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function podState(pod: KubeObject | undefined): string {
  if (!pod) return 'no pod';
  if (pod.metadata.deletionTimestamp) return 'Terminating';
  const ready = (pod.status?.conditions ?? []).find((c: Condition) => c.type === 'Ready')?.status === 'True';
  return ready ? 'Ready' : (pod.status?.phase ?? 'Pending');
}

/**
 * The status screen of one LedgerCluster (pure): summary, members with role, height and pod, conditions, and the
 * latest Warning Events.
 */
export function renderStatus(lc: LedgerCluster, pods: KubeObject[], events: KubeObject[], now: Date): string {
  const st = lc.status ?? {};
  const conditions = (st.conditions ?? []) as Condition[];
  const ready = conditions.find((c) => c.type === 'Ready');
  const spec = lc.spec as { validators?: number; image?: string; tls?: { mode?: string } };
  const lines: string[] = [];
  lines.push(
    `LedgerCluster ${lc.metadata.namespace}/${lc.metadata.name}   Ready=${ready?.status ?? 'Unknown'}${ready?.reason ? ` (${ready.reason})` : ''}   age ${age(lc.metadata.creationTimestamp, now)}`,
  );
  const height =
    st.height === undefined
      ? 'height ?'
      : `height ${st.height}${st.lastHeightChange ? ` (moved ${age(st.lastHeightChange, now)} ago)` : ''}`;
  lines.push(
    [
      `validators ${spec.validators ?? '?'} desired, ${st.validators ?? 0} ready`,
      `active ${st.activeValidators ?? '?'}`,
      `quorum ${st.quorum ?? '?'}`,
      height,
      `round ${st.round ?? '?'}`,
      `${st.pendingRecords ?? '?'} records waiting`,
    ].join(' · '),
  );
  const p = st.pendingChange;
  lines.push(
    `pending change: ${p ? `${p.kind} ${p.validator}${p.via ? ` via ${p.via}` : ''}${p.since ? ` since ${p.since} (${age(p.since, now)} ago)` : ''}` : 'none'}`,
  );
  lines.push(`image ${spec.image ?? '?'} · TLS ${spec.tls?.mode ?? 'server'}`);
  lines.push('');
  const byName = new Map(pods.map((pod) => [pod.metadata.labels?.['scriptorium.dev/validator'] ?? '', pod]));
  const members = (st.members ?? []) as Array<{ name: string; role: string; height?: number }>;
  lines.push(
    ...table(
      ['MEMBER', 'ROLE', 'HEIGHT', 'POD'],
      members.map((m) => [
        m.name,
        m.role,
        m.height === undefined ? '?' : String(m.height),
        podState(byName.get(m.name)),
      ]),
    ),
  );
  lines.push('');
  lines.push(
    ...table(
      ['CONDITION', 'STATUS', 'REASON', 'AGE', 'MESSAGE'],
      conditions.map((c) => [c.type, c.status, c.reason ?? '', age(c.lastTransitionTime, now), c.message ?? '']),
    ),
  );
  const warnings = events
    .filter((e) => e.type === 'Warning')
    .sort((a, b) => String(eventTime(b)).localeCompare(String(eventTime(a))))
    .slice(0, 5);
  if (warnings.length > 0) {
    lines.push('', 'RECENT WARNINGS');
    lines.push(
      ...table(
        ['AGE', 'REASON', 'NOTE'],
        warnings.map((e) => [age(eventTime(e), now), e.reason ?? '', String(e.note ?? e.message ?? '').slice(0, 200)]),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

function eventTime(e: KubeObject): string | undefined {
  return e.eventTime ?? e.series?.lastObservedTime ?? e.deprecatedLastTimestamp ?? e.metadata.creationTimestamp;
}
