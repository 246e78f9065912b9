// The watcher's status: the shapes GET /watch shows (a broker, a pass, the notified entities, the whole), and each
// broker's last read as /watch, the broker metrics and the log tell it (complete or failed and why, entities
// listed, the unreadable ones, the primary's scope).
import type { Unreadable } from './broker-reads.ts';
import type { BrokerEndpoint, PrimaryScope } from './endpoint.ts';
import type { UnreadableEntity } from './listing.ts';
import type { Now, WatcherMetrics, WatchLog } from './ports.ts';
import { BrokerReadError, type BrokerReadReason } from './read-error.ts';
import type { SubscriptionStatus } from './subscriber.ts';

/** Unreadable entities shown in /watch per broker. */
const SHOWN_UNREADABLE = 20;

export interface BrokerStatus {
  url: string;
  role: 'primary' | 'federated';
  /** Whether the last read of this broker was complete. */
  ok: boolean;
  reason?: BrokerReadReason;
  /** Error detail of the last failed read (no secrets: URLs and status codes only). */
  detail?: string;
  lastReadAt?: number;
  entities?: number;
  /** Entities the last read listed but could not read (skipped), and the first of them. */
  unreadable?: number;
  unreadableEntities?: UnreadableEntity[];
  /** The primary: whether its listing is its own data only, and how that is known. */
  scope?: PrimaryScope;
  /** Subscribe mode: this node's subscription, and the changes sweeps found that no notification announced. */
  subscription?: SubscriptionStatus;
  missedChanges?: number;
}

export interface PassResult {
  /** Subscribe mode: `full` or `incremental` (modified entities only); poll mode: always `full`. */
  kind: 'full' | 'incremental';
  startedAt: number;
  durationMs: number;
  /** False when the primary could not be read (nothing recorded at all). */
  primaryRead: boolean;
  /** Set when the pass did not run: the node was catching up with its peers. */
  skipped?: 'not_synced';
  submitted: { ok: number; tampered: number };
  /** Time spent waiting for room in the mempool (backpressure). */
  waitedMs: number;
  /** Listing pages read, how many of them had changed and were looked into, and the entities parsed there. */
  pages: number;
  parsedPages: number;
  parsedEntities: number;
  /**
   * Subscribe mode: changes this pass found that no notification had announced (yet: each is counted missed, in
   * /watch and the metric, when no notification about it arrives within MISSED_GRACE_MS).
   */
  missedChanges: number;
}

export interface NotifiedStatus {
  /** Notifications accepted, and the entities they named. */
  received: number;
  entities: number;
  /** Entities judged after a notification, and records that came of it. */
  judged: number;
  submitted: { ok: number; tampered: number };
  /** Entities waiting to be judged (and the most that ever waited); announcements dropped because the queue was full. */
  pending: number;
  maxPending: number;
  dropped: number;
  /** Time the judging of notified entities waited for room in the mempool (backpressure). */
  waitedMs: number;
  /** Refused notifications: a wrong or missing secret, or a body that is no notification. */
  unauthorized: number;
  malformed: number;
}

export interface WatcherStatus {
  mode: 'poll' | 'subscribe';
  brokers: BrokerStatus[];
  lastPass?: PassResult;
  passes: number;
  /** Subscribe mode: changes sweeps found that no notification had announced, and the notifications. */
  missedChanges?: number;
  /** Subscribe mode: changes a sweep found unannounced that still wait, within their grace, for a notification. */
  suspectedChanges?: number;
  notified?: NotifiedStatus;
  nextPassAt?: number;
}

/** How a notification was taken. */
export type NotifyResult = 'accepted' | 'unauthorized' | 'malformed';

/** A pass's result before it ran. */
export function newPassResult(kind: 'full' | 'incremental', startedAt: number): PassResult {
  return {
    kind,
    startedAt,
    durationMs: 0,
    primaryRead: false,
    submitted: { ok: 0, tampered: 0 },
    waitedMs: 0,
    pages: 0,
    parsedPages: 0,
    parsedEntities: 0,
    missedChanges: 0,
  };
}

export interface BrokerStatusDeps {
  now: Now;
  log: WatchLog | undefined;
  metrics: WatcherMetrics | undefined;
}

/** Each broker's last read, in the order of the configuration (primary first). */
export class BrokerStatuses {
  private readonly statuses = new Map<string, BrokerStatus>();
  private readonly deps: BrokerStatusDeps;

  constructor(brokers: readonly BrokerEndpoint[], deps: BrokerStatusDeps) {
    this.deps = deps;
    for (const b of brokers) this.statuses.set(b.url, { url: b.url, role: b.role, ok: false });
  }

  list(): BrokerStatus[] {
    return [...this.statuses.values()];
  }

  /** A complete read: `entities` listed (undefined: an incremental read, which cannot count them). */
  readOk(endpoint: BrokerEndpoint, entities: number | undefined, unreadable: Unreadable): void {
    const { metrics, log } = this.deps;
    const previous = this.statuses.get(endpoint.url);
    this.statuses.set(endpoint.url, {
      url: endpoint.url,
      role: endpoint.role,
      ok: true,
      lastReadAt: this.deps.now(),
      ...(entities !== undefined
        ? { entities }
        : previous?.entities !== undefined
          ? { entities: previous.entities }
          : {}),
      unreadable: unreadable.list.length,
      ...(unreadable.list.length > 0 ? { unreadableEntities: unreadable.list.slice(0, SHOWN_UNREADABLE) } : {}),
      ...(previous?.scope ? { scope: previous.scope } : {}),
    });
    metrics?.brokerUp.set({ broker: endpoint.url }, 1);
    if (entities !== undefined) metrics?.brokerEntities.set({ broker: endpoint.url }, entities);
    metrics?.unreadableEntities.set({ broker: endpoint.url }, unreadable.list.length);
    if (unreadable.list.length > 0)
      log?.warn(
        {
          broker: endpoint.url,
          unreadable: unreadable.list.length,
          first: unreadable.list.slice(0, 5).map((u) => ({ id: u.id ?? null, reason: u.reason })),
        },
        'broker watcher: entities that could not be read were skipped; the rest of the broker was judged',
      );
  }

  /** A read that failed: nothing is recorded for the broker this pass. */
  readFailed(endpoint: BrokerEndpoint, err: unknown): void {
    const { metrics, log } = this.deps;
    const e = err instanceof BrokerReadError ? err : new BrokerReadError(endpoint.url, 'malformed', String(err));
    const previous = this.statuses.get(endpoint.url);
    this.statuses.set(endpoint.url, {
      url: endpoint.url,
      role: endpoint.role,
      ok: false,
      reason: e.reason,
      detail: e.message,
      ...(previous?.lastReadAt ? { lastReadAt: previous.lastReadAt } : {}),
      ...(previous?.scope ? { scope: previous.scope } : {}),
    });
    metrics?.brokerUp.set({ broker: endpoint.url }, 0);
    metrics?.readFailures.inc({ broker: endpoint.url, reason: e.reason });
    log?.warn(
      { broker: endpoint.url, role: endpoint.role, reason: e.reason, detail: e.message },
      'broker watcher: broker not read completely; nothing recorded for it this pass',
    );
  }

  /** What the primary's listing holds: its own data only, or perhaps federated data too. */
  setScope(endpoint: BrokerEndpoint, scope: PrimaryScope): void {
    const status = this.statuses.get(endpoint.url);
    if (status) status.scope = scope;
    this.deps.metrics?.primaryRestricted.set({ broker: endpoint.url }, scope.restricted ? 1 : 0);
    if (!scope.restricted)
      this.deps.log?.warn(
        { broker: endpoint.url, how: scope.how },
        'broker watcher: the primary may list federated data',
      );
  }
}
