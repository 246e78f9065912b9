// Notification intake and its backpressure (subscribe mode): a notification is authenticated (subscriber.ts),
// read for the entities it names (notification.ts) and answered at once; the entities wait in the bounded notified
// queue (notified-queue.ts; a change on the primary waits for federation to copy it), and past its bound the
// announcements are dropped and a full sweep is asked for. One worker judges them in batches, one listing request
// a batch and broker (broker-reads.ts's readIds), on both sides, through the comparer, and hands the records over
// like a pass. It also keeps the missed-change accounting (missed-changes.ts): what it is waiting for or judging
// is not missed.
import { readIds } from './broker-reads.ts';
import type { Comparer } from './comparer.ts';
import type { WatcherConfig } from './config.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { brokerEntityKey, MissedChanges } from './missed-changes.ts';
import type { Mutex } from './mutex.ts';
import { parseNotification } from './notification.ts';
import { NotifiedQueue, type PendingEntity } from './notified-queue.ts';
import { NOT_SYNCED_RETRY_MS } from './pass-schedule.ts';
import type { BrokerHttp, Now, Stopping, WatcherMetrics, WatcherPorts, WatchLog } from './ports.ts';
import type { ObservationRecord } from './record.ts';
import type { NotifiedStatus, NotifyResult } from './status.ts';
import { type Submitted, type Submitter, tamperedFirst } from './submitter.ts';
import type { Subscriber } from './subscriber.ts';

/**
 * A change notified by the primary is judged on the federated brokers this long after, so that federation has
 * copied it (judged at once, every copy would be TAMPERED until it had). A federated broker's own change is
 * judged at once.
 */
export const PRIMARY_CHANGE_GRACE_MS = 2000;
/** Notified entities judged per batch (one listing request a batch and broker). */
const NOTIFIED_BATCH = 100;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface NotifiedIntakeDeps {
  config: WatcherConfig;
  http: BrokerHttp;
  comparer: Comparer;
  submitter: Submitter;
  /** Subscribe mode: knows each broker's channel and secret, and is told of changes its notifications missed. */
  subscriber: Pick<Subscriber, 'authenticate' | 'changesMissed'> | undefined;
  /** Held while notified entities change the state (a complete read of the primary holds it too). */
  stateLock: Mutex;
  ports: Pick<WatcherPorts, 'ready'>;
  now: Now;
  log: WatchLog | undefined;
  metrics: WatcherMetrics | undefined;
  stopping: Stopping;
  /** Notified entities waiting at most (NotifiedQueue's default when undefined). */
  maxPendingEntities: number | undefined;
  /** Delay before a primary's notified change is judged on the federated brokers. */
  primaryGraceMs: number;
  /** How long a change a sweep found waits for its notification before it is counted missed. */
  missedGraceMs: number;
  /** Announcements were dropped (the queue was full): a full sweep soon. */
  sweepSoon(why: string): void;
}

export class NotifiedIntake {
  /** Changes sweeps found that no notification announced. */
  readonly missed: MissedChanges;
  private readonly deps: NotifiedIntakeDeps;
  private readonly queue: NotifiedQueue;
  /** Notified entities being judged right now (taken from the queue): a sweep reading them has not missed them. */
  private readonly judging = new Set<string>();
  private readonly counts: NotifiedStatus = {
    received: 0,
    entities: 0,
    judged: 0,
    submitted: { ok: 0, tampered: 0 },
    pending: 0,
    maxPending: 0,
    dropped: 0,
    waitedMs: 0,
    unauthorized: 0,
    malformed: 0,
  };
  private worker: Promise<void> | undefined;
  private workerWake: (() => void) | undefined;

  constructor(deps: NotifiedIntakeDeps) {
    this.deps = deps;
    this.queue = new NotifiedQueue(deps.maxPendingEntities);
    this.missed = new MissedChanges({
      now: deps.now,
      graceMs: deps.missedGraceMs,
      metrics: deps.metrics,
      stopping: deps.stopping,
      announced: (broker, type, id, key) => this.queue.has(broker, type, id) || this.judging.has(key),
      onMissed: (broker, foundAt) => deps.subscriber?.changesMissed(broker, foundAt),
    });
  }

  /**
   * A notification POSTed on `channel` with the secret `token` (subscribe mode): authenticated, read, and its
   * entities queued to be judged. Answers at once; the judging happens after.
   */
  notify(channel: string, token: string | undefined, body: unknown): NotifyResult {
    const { subscriber, metrics, log } = this.deps;
    const counts = this.counts;
    const endpoint = subscriber?.authenticate(channel, token);
    if (!endpoint) {
      counts.unauthorized++;
      metrics?.notifications.inc({ result: 'unauthorized' });
      return 'unauthorized';
    }
    const parsed = parseNotification(endpoint.api, body);
    if ('error' in parsed) {
      counts.malformed++;
      metrics?.notifications.inc({ result: 'malformed' });
      log?.warn({ broker: endpoint.url, detail: parsed.error }, 'broker watcher: a notification was refused');
      return 'malformed';
    }
    counts.received++;
    counts.entities += parsed.refs.length;
    const now = this.deps.now();
    const due = endpoint.role === 'primary' ? now + this.deps.primaryGraceMs : now;
    for (const ref of parsed.refs) this.missed.notified(endpoint.url, ref.id);
    const { dropped } = this.queue.add(endpoint.url, parsed.refs, now, due);
    if (dropped > 0)
      for (const ref of parsed.refs)
        if (!this.queue.has(endpoint.url, ref.type, ref.id)) this.missed.overflow(endpoint.url, ref.id, now);
    counts.maxPending = Math.max(counts.maxPending, this.queue.size);
    metrics?.notifications.inc({ result: dropped > 0 ? 'overflow' : 'accepted' });
    metrics?.notifiedPending.set(this.queue.size);
    if (dropped > 0) {
      counts.dropped += dropped;
      for (const url of this.queue.takeOverflowed())
        log?.warn({ broker: url }, 'broker watcher: too many notified entities waiting; a sweep will catch up');
      this.deps.sweepSoon('notified entities overflowed');
    }
    this.wakeWorker();
    return 'accepted';
  }

  /** The notified entities' figures for /watch. */
  status(): NotifiedStatus {
    return { ...this.counts, submitted: { ...this.counts.submitted }, pending: this.queue.size };
  }

  /** Stops the missed-change timer and wakes a waiting worker; resolves once the worker has ended. */
  stop(): Promise<void> {
    this.missed.stop();
    this.workerWake?.();
    return this.worker?.catch(() => undefined) ?? Promise.resolve();
  }

  private wakeWorker(): void {
    if (this.deps.stopping()) return;
    if (this.worker) {
      this.workerWake?.();
      return;
    }
    this.worker = this.drain().finally(() => {
      this.worker = undefined;
      if (this.queue.size > 0 && !this.deps.stopping()) this.wakeWorker();
    });
  }

  /** Judges notified entities until none is due; waits for the next due one. */
  private async drain(): Promise<void> {
    const { config, ports, now, log, metrics, stopping } = this.deps;
    for (;;) {
      if (stopping()) return;
      // A node catching up with its peers judges nothing (its memory of the chain is behind): the entities wait.
      if (ports.ready && !ports.ready()) {
        await sleep(NOT_SYNCED_RETRY_MS);
        continue;
      }
      let worked = false;
      for (const endpoint of [config.primary, ...config.federated]) {
        const batch = this.queue.take(endpoint.url, NOTIFIED_BATCH, now());
        if (batch.length === 0) continue;
        worked = true;
        metrics?.notifiedPending.set(this.queue.size);
        try {
          await this.judge(endpoint, batch);
        } catch (err) {
          // A broker that could not be read: these entities are left to the next sweep (counted missed there).
          log?.warn(
            { broker: endpoint.url, entities: batch.length, detail: (err as Error).message },
            'broker watcher: notified entities could not be judged; the next sweep will',
          );
        }
      }
      if (worked) continue;
      const due = this.queue.nextDue();
      if (due === undefined) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, due - now()));
        this.workerWake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.workerWake = undefined;
    }
  }

  /** Judges notified entities of `endpoint`: their current values on the primary and the federated brokers. */
  private async judge(endpoint: BrokerEndpoint, batch: PendingEntity[]): Promise<void> {
    const ids = [...new Set(batch.map((p) => p.ref.id))];
    const inFlight = ids.map((id) => brokerEntityKey(endpoint.url, id));
    for (const k of inFlight) this.judging.add(k);
    try {
      await this.judgeNow(endpoint, batch, ids);
    } finally {
      for (const k of inFlight) this.judging.delete(k);
    }
  }

  private async judgeNow(endpoint: BrokerEndpoint, batch: PendingEntity[], ids: string[]): Promise<void> {
    const { config, http, comparer, submitter, stateLock, metrics } = this.deps;
    const federated = endpoint.role === 'primary' ? config.federated : [endpoint];
    const onPrimary = await readIds(http, config.primary, ids);
    const onFederated = await Promise.all(federated.map((f) => readIds(http, f, ids)));
    const records: ObservationRecord[] = [];
    await stateLock.run(() => comparer.judgeNotified(federated, batch, onPrimary, onFederated, records));
    const now = this.deps.now();
    for (const p of batch) metrics?.notifiedSeconds.observe((now - p.at) / 1000);
    const counts = this.counts;
    counts.judged += batch.length;
    const result: Submitted = { submitted: { ok: 0, tampered: 0 }, waitedMs: 0 };
    await submitter.offer(tamperedFirst(records), result);
    counts.submitted.ok += result.submitted.ok;
    counts.submitted.tampered += result.submitted.tampered;
    counts.waitedMs += result.waitedMs;
    metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
  }
}
