// The broker watcher. Two modes (NODE_BROKER__MODE):
//
// - poll: every poll interval, one comparison pass — read the primary completely, then each federated broker
//   completely, judge every entity against the primary, and hand the records the chain does not hold yet to the
//   node (its mempool, which gossips them to the peers). The validators spread their passes over the interval
//   (`phase`, `nextPassAt`): a change is found by whichever passes next, and its record, whose id comes from its
//   content, is the same whoever finds it.
// - subscribe: every validator subscribes to every broker (subscriber.ts); a notified entity is judged at once —
//   its current value read from both sides (the notification is news that it changed, not its value: a lost, late,
//   repeated or invented notification then costs a read, never a wrong record) — and a sweep, a pass as above,
//   runs every sweep interval at this validator's place in it, so that the cluster sweeps n times an interval and
//   no broker is read in full n times over. A sweep is incremental (entities modified since the last one, by the
//   broker's own clock) where the broker can filter by modification time, and complete every FULL_SWEEP_EVERY
//   sweeps, when a subscription had to be made again, or when notifications overflowed. What a sweep finds that no
//   notification announced is counted (missed changes, per broker).
//
// The node calls `applyFinalized` for every finalized block (also when it replays its chain on start), which is
// how the memory of what is already recorded stays the chain's.
//
// Cheap when nothing changed: every page of every listing is digested as it arrives (digest.ts); a page whose
// bytes are those of the last pass, listing entities that all still match the chain, is neither parsed nor
// judged. A page that changed is split into its entities' bytes (page-elements.ts), each digested: only an
// entity whose bytes or primary counterpart changed is parsed and judged against the memory (memory.ts's
// settled keys), so a tamper spread over every page costs a scan of each page, not a parse of it.
//
// Entities are judged one by one: one the watcher cannot read is reported (with its id, in /watch, the metrics and
// the log) and skipped; its counterparts are not judged that pass (nothing is decided from what could not be read).
//
// Bounded while there is much to record (a first pass notarises every observation): the records of one broker
// are kept until its read is complete (never recorded from a partial read) up to BUFFER_MAX; past that the
// read goes on validating only, and once complete the broker is read a second time from the page where the
// buffer filled, judging and handing records over page by page. Records are handed over only while the
// mempool has room (`room()`, the node's window): the pass waits for consensus to drain it (backpressure),
// so the watcher never holds more than a page and a buffer, nor floods the node. TAMPERED records go first.
// Notified entities wait in a bounded queue (notified-queue.ts) and are judged in batches, one listing request a
// batch and broker.
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { WatcherConfig } from './config.ts';
import { ABSENT, DIGEST64_CHARS, digestBytes } from './digest.ts';
import type { BrokerEndpoint, ListingQuery, PrimaryScope } from './endpoint.ts';
import { EntitySet } from './entities.ts';
import { FederatedState } from './federated.ts';
import { type BrokerHttp, createBrokerHttp } from './http-client.ts';
import {
  isUnreadable,
  listedTwice,
  listingFor,
  ownerQuery,
  type RawPage,
  type ReadFrom,
  readRawPages,
  type ScannedPage,
  scanPage,
  type UnreadableEntity,
} from './listing.ts';
import { ObservationMemory, type ScopeMemory } from './memory.ts';
import type { WatcherMetrics } from './metrics.ts';
import { recordsFor } from './notary.ts';
import { type EntityRef, parseNotification } from './notification.ts';
import { NotifiedQueue, type PendingEntity } from './notified-queue.ts';
import { entityKey, type ObservedEntity, splitEntityKey } from './observe.ts';
import { isEntity, knownAt, type PageMemo, PrimaryState, REPEATED, UNREADABLE } from './primary.ts';
import { BrokerReadError, type BrokerReadReason } from './read-error.ts';
import { isObservationRecord, type ObservationRecord, type ObservationScope } from './record.ts';
import { Subscriber, type SubscriptionStatus } from './subscriber.ts';
import { allOk, entityDigest, judge } from './verdict.ts';

/** Records handed to the mempool at once. */
const SUBMIT_SLICE = 2000;
/** Records of one broker kept until its read is complete; beyond, a second read hands them over page by page. */
export const BUFFER_MAX = 32_768;
/** How often a pass waiting for room asks again, when the node does not say. */
const ROOM_POLL_MS = 50;
/** A pass (or the judging of notified entities) that found the node catching up tries again this soon. */
const NOT_SYNCED_RETRY_MS = 1000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** Entities reported unreadable per broker and pass; more, and the broker's read fails (malformed). */
const MAX_UNREADABLE = 10_000;
/** Unreadable entities shown in /watch per broker. */
const SHOWN_UNREADABLE = 20;
/** Subscribe mode: every this many sweeps, one reads everything (deletions included). */
export const FULL_SWEEP_EVERY = 6;
/** An incremental sweep asks for entities modified since the last sweep began by the broker's clock, less this. */
const SWEEP_OVERLAP_MS = 60_000;
/** A sweep asked for early (a subscription made again, a notification overflow) waits at least this long. */
const EARLY_SWEEP_MIN_GAP_MS = 5000;
/**
 * A change notified by the primary is judged on the federated brokers this long after, so that federation has
 * copied it (judged at once, every copy would be TAMPERED until it had). A federated broker's own change is
 * judged at once.
 */
export const PRIMARY_CHANGE_GRACE_MS = 2000;
/** Notified entities judged per batch (one listing request a batch and broker). */
const NOTIFIED_BATCH = 100;
/**
 * A change a sweep found unannounced is counted missed only if no notification about it arrives this long after:
 * brokers notify after answering the write, so a sweep may read a change before its notification reaches the node.
 */
export const MISSED_GRACE_MS = 5000;
/** Suspected missed changes, and overflowed announcements, held at most (~100 bytes each). */
const MAX_SUSPECTS = 100_000;

/** What the watcher needs from the node. */
export interface WatcherPorts {
  /** Offers records to the mempool (which gossips the new ones); returns how many were new. */
  submit(records: ObservationRecord[]): number;
  /** How many more records the watcher may hand over now (the free part of the node's window). */
  room(): number;
  /** Resolves when there may be room again (a block was finalized); default: after a short while. */
  roomChanged?(): Promise<void>;
  /** False while the node is catching up with its peers: a pass then waits (its memory would be stale). */
  ready?(): boolean;
  /**
   * Where in each poll (or sweep) interval this node's passes start, as a fraction in [0, 1): the validators spread
   * their passes over the interval (nextPassAt), so one of them looks soon after any change. Default 0.
   */
  phase?(): number;
}

/**
 * When the next pass starts: the first start of this node's slot (`phase` of the interval after each multiple of
 * the interval on the clock) at or after `now`. The validators' passes thus keep their places in the interval
 * whatever their start times and pass durations: with n of them at phases 0, 1/n, …, a change waits at most
 * interval/n for a pass to begin, not up to a whole interval.
 * @example nextPassAt(12_300, 10_000, 0.25) // 12_500
 */
export function nextPassAt(now: number, intervalMs: number, phase: number): number {
  const offset = Math.floor(Math.min(Math.max(phase, 0), 1) * intervalMs) % intervalMs;
  const base = now - offset;
  const slot = Math.ceil(base / intervalMs) * intervalMs;
  return slot + offset;
}

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

export interface WatcherOptions {
  http?: BrokerHttp;
  logger?: Logger;
  metrics?: WatcherMetrics;
  now?: () => number;
  /** Records of one broker kept until its read is complete (default BUFFER_MAX). */
  bufferMax?: number;
  /** Entities per listing page (default and maximum: the API's limit). */
  pageSize?: number;
  /** Subscribe mode: names this node in its subscriptions (its public key). */
  nodeKey?: string;
  /** Notified entities waiting at most (default 100,000). */
  maxPendingEntities?: number;
  /** Delay before a primary's notified change is judged on the federated brokers (default PRIMARY_CHANGE_GRACE_MS). */
  primaryGraceMs?: number;
  /** How long a change a sweep found waits for its notification before it is counted missed (default MISSED_GRACE_MS). */
  missedGraceMs?: number;
}

/** How a notification was taken. */
export type NotifyResult = 'accepted' | 'unauthorized' | 'malformed';

/** Per broker and pass: the entities it could not read, and what that forbids deciding. */
interface Unreadable {
  list: UnreadableEntity[];
  ids: Set<string>;
  /** Some had no id: what is missing on that side cannot be told this pass. */
  anonymous: boolean;
}

const noUnreadable = (): Unreadable => ({ list: [], ids: new Set(), anonymous: false });

/** A promise chain that runs one task at a time. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(task: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

export class Watcher {
  readonly config: WatcherConfig;
  readonly memory = new ObservationMemory();
  private readonly primary = new PrimaryState(this.memory.entities, (i) => this.memory.primaryChanging(i));
  private readonly federated = new Map<string, FederatedState>();
  private readonly ports: WatcherPorts;
  private readonly http: BrokerHttp;
  private readonly ownsHttp: boolean;
  private readonly logger: Logger | undefined;
  private readonly metrics: WatcherMetrics | undefined;
  private readonly now: () => number;
  private readonly bufferMax: number;
  private readonly pageSize: number | undefined;
  private readonly primaryGraceMs: number;
  private readonly missedGraceMs: number;
  private readonly statuses = new Map<string, BrokerStatus>();
  /** Subscribe mode only. */
  private readonly subscriber: Subscriber | undefined;
  private readonly queue: NotifiedQueue;
  /** Notified entities being judged right now (taken from the queue): a sweep reading them has not missed them. */
  private readonly judging = new Set<string>();
  /** Held while the primary is read completely, and while a notified entity changes the state. */
  private readonly stateLock = new Mutex();
  private readonly notified: NotifiedStatus = {
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
  private readonly missedByBroker = new Map<string, number>();
  /**
   * Entities notifications announced that the full queue dropped (by broker and id, when): the sweep the overflow
   * asks for judges them, and does not count them missed. Bounded (MAX_SUSPECTS); emptied by each pass.
   */
  private readonly overflowed = new Map<string, number>();
  /** Changes a sweep found unannounced, by broker and id, until their grace tells whether a notification came. */
  private readonly suspects = new Map<string, { broker: string; until: number }>();
  private suspectTimer: NodeJS.Timeout | undefined;
  private lastPass: PassResult | undefined;
  private passes = 0;
  private sweepsSinceFull = 0;
  private fullSweepWanted = false;
  /** Per broker: the broker's clock (Date header) when its last read began; incremental sweeps start from it. */
  private readonly readClock = new Map<string, number>();
  private readonly noIncremental = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private nextAt: number | undefined;
  private running: Promise<PassResult> | undefined;
  private worker: Promise<void> | undefined;
  private workerWake: (() => void) | undefined;
  private stopped = true;
  private stopping = false;
  private lastEarlySweep = 0;

  constructor(config: WatcherConfig, ports: WatcherPorts, options: WatcherOptions = {}) {
    this.config = config;
    this.ports = ports;
    this.ownsHttp = !options.http;
    this.http = options.http ?? createBrokerHttp({ ca: config.ca });
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.now = options.now ?? Date.now;
    this.bufferMax = options.bufferMax ?? BUFFER_MAX;
    this.pageSize = options.pageSize;
    this.primaryGraceMs = options.primaryGraceMs ?? PRIMARY_CHANGE_GRACE_MS;
    this.missedGraceMs = options.missedGraceMs ?? MISSED_GRACE_MS;
    this.queue = new NotifiedQueue(options.maxPendingEntities);
    this.memory.primary = this.primary;
    for (const b of [config.primary, ...config.federated])
      this.statuses.set(b.url, { url: b.url, role: b.role, ok: false });
    for (const f of config.federated) this.federated.set(f.url, new FederatedState());
    if (config.mode === 'subscribe')
      this.subscriber = new Subscriber([config.primary, ...config.federated], this.http, {
        notifyUrl: config.notifyUrl,
        nodeKey: options.nodeKey ?? 'unnamed',
        checkMs: config.subscriptionCheckMs,
        logger: this.logger,
        metrics: this.metrics,
        now: this.now,
        onRecreated: () => this.sweepSoon('a subscription was made again'),
      });
  }

  /** Applies the watcher's records of a finalized block to the memory. */
  applyFinalized(records: readonly IntegrityRecord[], height: number): void {
    for (const r of records) if (isObservationRecord(r)) this.memory.apply(r);
    if (height > this.memory.height) this.memory.height = height;
  }

  private get intervalMs(): number {
    return this.config.mode === 'subscribe' ? this.config.sweepIntervalMs : this.config.pollIntervalMs;
  }

  /** Starts passes (sweeps) every interval, each at this node's place in it (the first at once); subscribes. */
  start(): void {
    this.stopped = false;
    this.stopping = false;
    this.schedule(0);
    this.subscriber?.start().catch((err: unknown) => this.logger?.error({ err }, 'broker watcher: subscribing failed'));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.nextAt = this.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const untilNextSlot = () => {
        let phase = 0;
        try {
          phase = this.ports.phase?.() ?? 0;
        } catch (err) {
          this.logger?.warn({ err }, 'broker watcher: no phase; the next pass starts at the top of the interval');
        }
        const now = this.now();
        return nextPassAt(now, this.intervalMs, phase) - now;
      };
      this.pass()
        .then(
          (r) => (r.skipped ? Math.min(NOT_SYNCED_RETRY_MS, this.intervalMs) : untilNextSlot()),
          (err: unknown) => {
            this.logger?.error({ err }, 'broker watcher: pass failed');
            return untilNextSlot();
          },
        )
        .then((next) => {
          if (!this.timer) this.schedule(next);
        });
    }, delayMs);
  }

  /** A full sweep soon (subscribe mode): something may have changed unannounced. */
  private sweepSoon(why: string): void {
    this.fullSweepWanted = true;
    if (this.stopped || this.running) return;
    const at = Math.max(this.now(), this.lastEarlySweep + EARLY_SWEEP_MIN_GAP_MS);
    if (this.nextAt !== undefined && this.nextAt <= at) return;
    this.lastEarlySweep = at;
    this.logger?.info({ why }, 'broker watcher: sweeping early');
    this.schedule(at - this.now());
  }

  /** Stops after the pass in progress (if any; a pass waiting for room ends at once); removes the subscriptions. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.suspectTimer) clearTimeout(this.suspectTimer);
    this.workerWake?.();
    await this.running?.catch(() => undefined);
    await this.worker?.catch(() => undefined);
    await this.subscriber?.stop();
    if (this.ownsHttp) await this.http.close();
  }

  status(): WatcherStatus {
    const subscribe = this.config.mode === 'subscribe';
    return {
      mode: this.config.mode,
      brokers: [...this.statuses.values()].map((s) => ({
        ...s,
        ...(subscribe
          ? { subscription: this.subscriber?.status(s.url), missedChanges: this.missedByBroker.get(s.url) ?? 0 }
          : {}),
      })),
      ...(this.lastPass ? { lastPass: { ...this.lastPass } } : {}),
      passes: this.passes,
      ...(subscribe
        ? {
            missedChanges: [...this.missedByBroker.values()].reduce((a, b) => a + b, 0),
            suspectedChanges: this.suspects.size,
            notified: { ...this.notified, submitted: { ...this.notified.submitted }, pending: this.queue.size },
          }
        : {}),
      ...(this.nextAt !== undefined ? { nextPassAt: this.nextAt } : {}),
    };
  }

  /** Bytes the watcher's per-entity state holds in typed arrays (the benchmark's account of its memory). */
  stateBytes(): number {
    let n = this.memory.byteLength + this.primary.byteLength;
    for (const f of this.federated.values()) n += f.byteLength;
    return n;
  }

  // ---- notifications -----------------------------------------------------------------------------------------

  /**
   * A notification POSTed on `channel` with the secret `token` (subscribe mode): authenticated, read, and its
   * entities queued to be judged. Answers at once; the judging happens after.
   */
  notify(channel: string, token: string | undefined, body: unknown): NotifyResult {
    const endpoint = this.subscriber?.authenticate(channel, token);
    if (!endpoint) {
      this.notified.unauthorized++;
      this.metrics?.notifications.inc({ result: 'unauthorized' });
      return 'unauthorized';
    }
    const parsed = parseNotification(endpoint.api, body);
    if ('error' in parsed) {
      this.notified.malformed++;
      this.metrics?.notifications.inc({ result: 'malformed' });
      this.logger?.warn({ broker: endpoint.url, detail: parsed.error }, 'broker watcher: a notification was refused');
      return 'malformed';
    }
    this.notified.received++;
    this.notified.entities += parsed.refs.length;
    const now = this.now();
    const due = endpoint.role === 'primary' ? now + this.primaryGraceMs : now;
    for (const ref of parsed.refs) this.suspects.delete(`${endpoint.url}\n${ref.id}`);
    const { dropped } = this.queue.add(endpoint.url, parsed.refs, now, due);
    if (dropped > 0)
      for (const ref of parsed.refs)
        if (!this.queue.has(endpoint.url, ref.type, ref.id) && this.overflowed.size < MAX_SUSPECTS)
          this.overflowed.set(`${endpoint.url}\n${ref.id}`, now);
    this.notified.maxPending = Math.max(this.notified.maxPending, this.queue.size);
    this.metrics?.notifications.inc({ result: dropped > 0 ? 'overflow' : 'accepted' });
    this.metrics?.notifiedPending.set(this.queue.size);
    if (dropped > 0) {
      this.notified.dropped += dropped;
      for (const url of this.queue.takeOverflowed())
        this.logger?.warn({ broker: url }, 'broker watcher: too many notified entities waiting; a sweep will catch up');
      this.sweepSoon('notified entities overflowed');
    }
    this.wakeWorker();
    return 'accepted';
  }

  private wakeWorker(): void {
    if (this.stopping) return;
    if (this.worker) {
      this.workerWake?.();
      return;
    }
    this.worker = this.drain().finally(() => {
      this.worker = undefined;
      if (this.queue.size > 0 && !this.stopping) this.wakeWorker();
    });
  }

  /** Judges notified entities until none is due; waits for the next due one. */
  private async drain(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      // A node catching up with its peers judges nothing (its memory of the chain is behind): the entities wait.
      if (this.ports.ready && !this.ports.ready()) {
        await sleep(NOT_SYNCED_RETRY_MS);
        continue;
      }
      let worked = false;
      for (const endpoint of [this.config.primary, ...this.config.federated]) {
        const batch = this.queue.take(endpoint.url, NOTIFIED_BATCH, this.now());
        if (batch.length === 0) continue;
        worked = true;
        this.metrics?.notifiedPending.set(this.queue.size);
        try {
          await this.judgeNotified(endpoint, batch);
        } catch (err) {
          // A broker that could not be read: these entities are left to the next sweep (counted missed there).
          this.logger?.warn(
            { broker: endpoint.url, entities: batch.length, detail: (err as Error).message },
            'broker watcher: notified entities could not be judged; the next sweep will',
          );
        }
      }
      if (worked) continue;
      const due = this.queue.nextDue();
      if (due === undefined) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, due - this.now()));
        this.workerWake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.workerWake = undefined;
    }
  }

  /** The entities with these ids on one broker, read now (one listing request per NOTIFIED_BATCH ids). */
  private async readIds(
    endpoint: BrokerEndpoint,
    ids: readonly string[],
  ): Promise<Map<string, { e: ObservedEntity; raws: string; at: number }>> {
    const out = new Map<string, { e: ObservedEntity; raws: string; at: number }>();
    const protocol = listingFor(endpoint);
    // An id holding a comma cannot be one of a list: such ids are asked for one at a time.
    const plain = ids.filter((id) => !id.includes(','));
    const groups = [plain, ...ids.filter((id) => id.includes(',')).map((id) => [id])];
    for (const group of groups) {
      if (group.length === 0) continue;
      const req = protocol.idsRequest(endpoint, group);
      const res = await this.http.get(endpoint.url, req.url, req.headers);
      const raw = res.headers[protocol.countHeader];
      const total = Number(Array.isArray(raw) ? raw[0] : raw);
      if (!Number.isSafeInteger(total)) throw new BrokerReadError(endpoint.url, 'malformed', 'no count');
      const page: RawPage = {
        key: 'ids',
        query: { key: 'ids' },
        queryIndex: 0,
        offset: 0,
        pageSize: protocol.maxLimit,
        total,
        expected: Math.min(total, protocol.maxLimit),
        body: res.body,
      };
      const scan = scanPage(endpoint, page);
      for (let k = 0; k < scan.count; k++) {
        const e = scan.parse(k);
        if (isUnreadable(e)) continue; // left to the sweep, which reports it
        if (!group.includes(e.id)) continue; // a broker naming what was not asked for is not believed
        out.set(entityKey(e.type, e.id), { e, raws: scan.raws, at: DIGEST64_CHARS * k });
      }
    }
    return out;
  }

  /** Judges notified entities of `endpoint`: their current values on the primary and the federated brokers. */
  private async judgeNotified(endpoint: BrokerEndpoint, batch: PendingEntity[]): Promise<void> {
    const ids = [...new Set(batch.map((p) => p.ref.id))];
    const inFlight = ids.map((id) => `${endpoint.url}\n${id}`);
    for (const k of inFlight) this.judging.add(k);
    try {
      await this.judgeNotifiedNow(endpoint, batch, ids);
    } finally {
      for (const k of inFlight) this.judging.delete(k);
    }
  }

  private async judgeNotifiedNow(endpoint: BrokerEndpoint, batch: PendingEntity[], ids: string[]): Promise<void> {
    const federated = endpoint.role === 'primary' ? this.config.federated : [endpoint];
    const onPrimary = await this.readIds(this.config.primary, ids);
    const onFederated = await Promise.all(federated.map((f) => this.readIds(f, ids)));
    const records: ObservationRecord[] = [];
    await this.stateLock.run(() => {
      // Every entity either side holds under these ids, and those the notifications named.
      const keys = new Set<string>(batch.map((p) => entityKey(p.ref.type, p.ref.id)));
      for (const k of onPrimary.keys()) keys.add(k);
      for (const m of onFederated) for (const k of m.keys()) keys.add(k);
      for (const key of keys) {
        const { id, type } = splitEntityKey(key);
        const p = onPrimary.get(key);
        const i =
          p || onFederated.some((m) => m.has(key))
            ? this.memory.entities.intern(type, id)
            : this.memory.entities.find(type, id);
        if (i === undefined) continue;
        this.primary.set(i, p?.e);
        federated.forEach((f, n) => {
          const scope = this.memory.scope(this.scope(f));
          const state = this.federated.get(f.url) as FederatedState;
          const got = (onFederated[n] as Map<string, { e: ObservedEntity; raws: string; at: number }>).get(key);
          state.see(i, got ? entityDigest(got.e) : undefined);
          if (got) this.judge(scope, i, got.e, got.raws, got.at, records);
          else for (const r of this.judgeMissing(scope, i)) records.push(r);
        });
      }
    });
    const now = this.now();
    for (const p of batch) this.metrics?.notifiedSeconds.observe((now - p.at) / 1000);
    this.notified.judged += batch.length;
    const result = { submitted: { ok: 0, tampered: 0 }, waitedMs: 0 };
    await this.offer(tamperedFirst(records), result);
    this.notified.submitted.ok += result.submitted.ok;
    this.notified.submitted.tampered += result.submitted.tampered;
    this.notified.waitedMs += result.waitedMs;
    this.metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    this.metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
  }

  // ---- passes (sweeps) ----------------------------------------------------------------------------------------

  /** One comparison pass (the timer runs these; tests and the benchmark may call it directly). */
  pass(kind?: 'full' | 'incremental'): Promise<PassResult> {
    if (!this.running) this.running = this.runPass(kind).finally(() => (this.running = undefined));
    return this.running;
  }

  private scope(endpoint: BrokerEndpoint): ObservationScope {
    return { broker: endpoint.url, service: endpoint.service, servicePath: endpoint.servicePath };
  }

  /** What this sweep reads: everything, or (subscribe mode, every broker able) what was modified since the last. */
  private sweepKind(asked: 'full' | 'incremental' | undefined): 'full' | 'incremental' {
    if (asked) return asked;
    if (this.config.mode !== 'subscribe' || this.fullSweepWanted) return 'full';
    if (this.sweepsSinceFull + 1 >= FULL_SWEEP_EVERY) return 'full';
    const brokers = [this.config.primary, ...this.config.federated];
    const able = brokers.every((b) => this.readClock.has(b.url) && !this.noIncremental.has(b.url));
    const baseline = this.primary.baseline && [...this.federated.values()].every((f) => f.baseline);
    return able && baseline ? 'incremental' : 'full';
  }

  private modifiedSince(endpoint: BrokerEndpoint): string | undefined {
    const clock = this.readClock.get(endpoint.url);
    return clock === undefined ? undefined : new Date(clock - SWEEP_OVERLAP_MS).toISOString();
  }

  /**
   * Notes the broker's clock from the first answer of a read: its Date header, or (a broker that sends none, as
   * Scorpio 5.0.3) this node's clock, which SWEEP_OVERLAP_MS of overlap covers for a skew up to a minute.
   */
  private noteClock(endpoint: BrokerEndpoint, page: RawPage, noted: Set<string>): void {
    if (noted.has(endpoint.url)) return;
    noted.add(endpoint.url);
    const at = page.date === undefined ? Number.NaN : Date.parse(page.date);
    this.readClock.set(endpoint.url, Number.isNaN(at) ? this.now() : at);
  }

  private readOk(endpoint: BrokerEndpoint, entities: number | undefined, unreadable: Unreadable): void {
    const previous = this.statuses.get(endpoint.url);
    this.statuses.set(endpoint.url, {
      url: endpoint.url,
      role: endpoint.role,
      ok: true,
      lastReadAt: this.now(),
      ...(entities !== undefined
        ? { entities }
        : previous?.entities !== undefined
          ? { entities: previous.entities }
          : {}),
      unreadable: unreadable.list.length,
      ...(unreadable.list.length > 0 ? { unreadableEntities: unreadable.list.slice(0, SHOWN_UNREADABLE) } : {}),
      ...(previous?.scope ? { scope: previous.scope } : {}),
    });
    this.metrics?.brokerUp.set({ broker: endpoint.url }, 1);
    if (entities !== undefined) this.metrics?.brokerEntities.set({ broker: endpoint.url }, entities);
    this.metrics?.unreadableEntities.set({ broker: endpoint.url }, unreadable.list.length);
    if (unreadable.list.length > 0)
      this.logger?.warn(
        {
          broker: endpoint.url,
          unreadable: unreadable.list.length,
          first: unreadable.list.slice(0, 5).map((u) => ({ id: u.id ?? null, reason: u.reason })),
        },
        'broker watcher: entities that could not be read were skipped; the rest of the broker was judged',
      );
  }

  private readFailed(endpoint: BrokerEndpoint, err: unknown): void {
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
    this.metrics?.brokerUp.set({ broker: endpoint.url }, 0);
    this.metrics?.readFailures.inc({ broker: endpoint.url, reason: e.reason });
    this.logger?.warn(
      { broker: endpoint.url, role: endpoint.role, reason: e.reason, detail: e.message },
      'broker watcher: broker not read completely; nothing recorded for it this pass',
    );
  }

  private setScope(endpoint: BrokerEndpoint, scope: PrimaryScope): void {
    const status = this.statuses.get(endpoint.url);
    if (status) status.scope = scope;
    this.metrics?.primaryRestricted.set({ broker: endpoint.url }, scope.restricted ? 1 : 0);
    if (!scope.restricted)
      this.logger?.warn(
        { broker: endpoint.url, how: scope.how },
        'broker watcher: the primary may list federated data',
      );
  }

  /**
   * A change a sweep found (subscribe mode): unless a notification about it waits or is being judged, it is a
   * suspect, counted missed if no notification about it arrives within its grace (missedGraceMs).
   */
  private missed(endpoint: BrokerEndpoint, i: number, result: PassResult): void {
    if (this.config.mode !== 'subscribe') return;
    const { id, type } = this.memory.entities.ref(i);
    const key = `${endpoint.url}\n${id}`;
    if (this.queue.has(endpoint.url, type, id) || this.judging.has(key) || this.overflowed.has(key)) return;
    result.missedChanges++;
    if (this.suspects.size >= MAX_SUSPECTS) this.countSuspects(Number.POSITIVE_INFINITY);
    this.suspects.set(key, { broker: endpoint.url, until: this.now() + this.missedGraceMs });
    this.suspectTimer ??= setTimeout(() => {
      this.suspectTimer = undefined;
      this.countSuspects(this.now());
    }, this.missedGraceMs + 100);
  }

  /** Counts as missed the suspects whose grace ended by `now` (and looks again later for the others). */
  private countSuspects(now: number): void {
    for (const [key, s] of this.suspects) {
      if (s.until > now) continue;
      this.suspects.delete(key);
      this.missedByBroker.set(s.broker, (this.missedByBroker.get(s.broker) ?? 0) + 1);
      this.metrics?.missedChanges.inc({ broker: s.broker });
    }
    if (this.suspects.size > 0 && !this.suspectTimer && !this.stopping)
      this.suspectTimer = setTimeout(() => {
        this.suspectTimer = undefined;
        this.countSuspects(this.now());
      }, this.missedGraceMs);
  }

  private unreadable(endpoint: BrokerEndpoint, into: Unreadable, e: UnreadableEntity): void {
    if (into.list.length >= MAX_UNREADABLE)
      throw new BrokerReadError(endpoint.url, 'malformed', `more than ${MAX_UNREADABLE} entities cannot be read`);
    into.list.push(e);
    if (e.id === undefined) into.anonymous = true;
    else into.ids.add(e.id);
  }

  private async runPass(asked?: 'full' | 'incremental'): Promise<PassResult> {
    const kind = this.sweepKind(asked);
    const startedAt = this.now();
    const result: PassResult = {
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
    if (this.ports.ready && !this.ports.ready()) return { ...result, skipped: 'not_synced' };
    if (kind === 'full') this.fullSweepWanted = false;
    const primaryUnreadable = noUnreadable();
    result.primaryRead = await this.stateLock.run(() => this.readPrimary(result, kind, primaryUnreadable));
    if (result.primaryRead)
      for (const federated of this.config.federated) await this.compare(federated, result, kind, primaryUnreadable);
    if (result.primaryRead) this.sweepsSinceFull = kind === 'full' ? 0 : this.sweepsSinceFull + 1;
    // What overflowed before this pass began, this pass has read.
    if (result.primaryRead) for (const [key, at] of this.overflowed) if (at < startedAt) this.overflowed.delete(key);
    result.durationMs = this.now() - startedAt;
    this.lastPass = result;
    this.passes++;
    this.metrics?.passSeconds.observe({ kind }, result.durationMs / 1000);
    this.metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    this.metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
    this.logger?.debug({ ...result }, 'broker watcher: pass');
    return result;
  }

  /** Reads the primary (completely, or what was modified) into the primary state; false on failure. */
  private async readPrimary(
    result: PassResult,
    kind: 'full' | 'incremental',
    unreadable: Unreadable,
  ): Promise<boolean> {
    const endpoint = this.config.primary;
    const full = kind === 'full';
    const baseline = this.primary.baseline;
    const noted = new Set<string>();
    let listed = 0;
    if (full) this.primary.beginRead();
    let queries: readonly ListingQuery[] = [];
    try {
      queries = await readRawPages(
        this.http,
        endpoint,
        (page) => {
          this.noteClock(endpoint, page, noted);
          result.pages++;
          if (!full) {
            this.primaryChanges(endpoint, page, queries, result, unreadable);
            return;
          }
          const parsed = this.primary.page(endpoint, page, queries, {
            onUnreadable: (e) => this.unreadable(endpoint, unreadable, e),
            onChanged: (i) => {
              if (baseline) this.missed(endpoint, i, result);
            },
          });
          if (parsed !== null) {
            result.parsedPages++;
            result.parsedEntities += parsed;
          }
        },
        {
          pageSize: this.pageSize,
          ...(full ? {} : { modifiedSince: this.modifiedSince(endpoint) }),
          onRestart: () => {
            if (full) this.primary.beginRead();
            unreadable.list.length = 0;
            unreadable.ids.clear();
            unreadable.anonymous = false;
          },
          queriesFound: (q) => {
            queries = q;
          },
        },
      );
    } catch (err) {
      if (!full && err instanceof BrokerReadError && err.reason === 'http_status') this.noIncremental.add(endpoint.url);
      this.readFailed(endpoint, err);
      return false;
    }
    if (full) {
      for (const i of this.primary.endRead())
        if (baseline && !unreadable.ids.has(this.memory.entities.ref(i).id)) this.missed(endpoint, i, result);
      this.primary.baseline = true;
      for (const _ of this.primary.members()) listed++;
    }
    this.readOk(endpoint, full ? listed : undefined, unreadable);
    const types = queries.flatMap((q) => q.types ?? []);
    this.subscriber?.setTypes(endpoint.url, types);
    this.setScope(endpoint, await listingFor(endpoint).primaryScope(this.http, endpoint, types));
    return true;
  }

  /** An incremental read's page of the primary: every entity listed is parsed and set. */
  private primaryChanges(
    endpoint: BrokerEndpoint,
    page: RawPage,
    queries: readonly ListingQuery[],
    result: PassResult,
    unreadable: Unreadable,
  ): void {
    const scan = scanPage(endpoint, page);
    result.parsedPages++;
    for (let k = 0; k < scan.count; k++) {
      const e = scan.parse(k);
      result.parsedEntities++;
      if (isUnreadable(e)) {
        this.unreadable(endpoint, unreadable, e);
        continue;
      }
      if (ownerQuery(queries, e.type) < page.queryIndex) continue;
      const i = this.memory.entities.intern(e.type, e.id);
      if (this.primary.set(i, e)) this.missed(endpoint, i, result);
    }
  }

  /**
   * Reads one federated broker (completely, or what was modified) and hands over the records it needs; nothing
   * for a read that fails.
   */
  private async compare(
    endpoint: BrokerEndpoint,
    result: PassResult,
    kind: 'full' | 'incremental',
    primaryUnreadable: Unreadable,
  ): Promise<void> {
    const scope = this.memory.scope(this.scope(endpoint));
    const state = this.federated.get(endpoint.url) as FederatedState;
    const memos = state.pages;
    const full = kind === 'full';
    const baseline = state.baseline;
    const noted = new Set<string>();
    const unreadable = noUnreadable();
    let listed = new EntitySet();
    let buffer: ObservationRecord[] = [];
    let overflowAt: ReadFrom | undefined;
    let digests = new Map<string, string>();
    const read = new Set<string>();
    let queries: readonly ListingQuery[] = [];
    const ctx: LookContext = {
      endpoint,
      scope,
      state,
      listed,
      result,
      baseline,
      queries,
      unreadable,
      primaryUnreadable,
    };
    const onPage = (page: RawPage) => {
      this.noteClock(endpoint, page, noted);
      ctx.listed = listed;
      ctx.queries = queries;
      result.pages++;
      read.add(page.key);
      const digest = digestBytes(page.body);
      digests.set(page.key, digest);
      const memo = full ? memos.get(page.key) : undefined;
      if (memo && memo.digest === digest && memo.entities.length === page.expected && this.settled(scope, memo)) {
        for (const i of memo.entities)
          if (isEntity(i) && !listed.add(i)) throw listedTwice(endpoint.url, this.memory.entities.ref(i).id);
        return;
      }
      result.parsedPages++;
      const scan = scanPage(endpoint, page);
      if (overflowAt !== undefined) {
        this.lookInto(ctx, page, scan, memo, null); // validated; judged by the second read
        return;
      }
      const before = buffer.length;
      const numbers = this.lookInto(ctx, page, scan, memo, buffer);
      if (buffer.length > this.bufferMax) {
        buffer.length = before;
        overflowAt = { query: page.queryIndex, offset: page.offset };
        return;
      }
      if (full) memos.set(page.key, { digest, entities: numbers, raws: scan.raws });
    };
    try {
      await readRawPages(this.http, endpoint, onPage, {
        pageSize: this.pageSize,
        ...(full ? {} : { modifiedSince: this.modifiedSince(endpoint) }),
        onRestart: () => {
          listed = new EntitySet();
          buffer = [];
          overflowAt = undefined;
          digests = new Map();
          read.clear();
          unreadable.list.length = 0;
          unreadable.ids.clear();
          unreadable.anonymous = false;
        },
        queriesFound: (q) => {
          queries = q;
        },
      });
    } catch (err) {
      if (!full && err instanceof BrokerReadError && err.reason === 'http_status') this.noIncremental.add(endpoint.url);
      this.readFailed(endpoint, err);
      return;
    }
    let entities: number | undefined;
    if (full) {
      for (const key of memos.keys()) if (!read.has(key)) memos.delete(key);
      entities = 0;
      for (const _ of listed.members(this.memory.entities.size)) entities++;
    }
    this.readOk(endpoint, entities, unreadable);
    this.subscriber?.setTypes(
      endpoint.url,
      queries.flatMap((q) => q.types ?? []),
    );
    await this.offer(tamperedFirst(buffer), result);
    buffer = [];
    if (full) {
      // Gone without a notification: entities seen before that this read did not list.
      if (baseline)
        for (const i of [...state.seenEntities()])
          if (!listed.has(i) && !unreadable.ids.has(this.memory.entities.ref(i).id)) {
            state.see(i, undefined);
            this.missed(endpoint, i, result);
          }
      state.baseline = true;
      // What the federated broker lacks: every primary entity it did not list (unless it could not read some
      // entity and cannot say which: then nothing is called missing this pass).
      if (!unreadable.anonymous) {
        let missing: ObservationRecord[] = [];
        for (const i of this.primary.members()) {
          if (listed.has(i) || unreadable.ids.has(this.memory.entities.ref(i).id)) continue;
          for (const r of this.judgeMissing(scope, i)) missing.push(r);
          if (missing.length >= SUBMIT_SLICE) {
            await this.offer(missing, result);
            missing = [];
          }
        }
        await this.offer(missing, result);
      }
    }
    if (overflowAt !== undefined) await this.secondRead(ctx, digests, queries, overflowAt);
  }

  /**
   * After a complete read whose records did not fit the buffer: reads the broker again from `from`, judging
   * each page whose bytes are those the complete read saw and handing its records over at once (a page that
   * changed since is left to the next pass). Ends quietly on a failure: the next pass goes on.
   */
  private async secondRead(
    ctx: LookContext,
    digests: Map<string, string>,
    queries: readonly ListingQuery[],
    from: ReadFrom,
  ): Promise<void> {
    const { endpoint, state, result } = ctx;
    const full = result.kind === 'full';
    try {
      await readRawPages(
        this.http,
        endpoint,
        async (page) => {
          if (this.stopping) throw new BrokerReadError(endpoint.url, 'inconsistent', 'watcher stopping');
          result.pages++;
          const digest = digestBytes(page.body);
          if (digests.get(page.key) !== digest) return;
          result.parsedPages++;
          const scan = scanPage(endpoint, page);
          const records: ObservationRecord[] = [];
          const memo = full ? state.pages.get(page.key) : undefined;
          const numbers = this.lookInto(
            { ...ctx, listed: new EntitySet(), baseline: false },
            page,
            scan,
            memo,
            records,
          );
          if (full) state.pages.set(page.key, { digest, entities: numbers, raws: scan.raws });
          await this.offer(tamperedFirst(records), result);
        },
        {
          from,
          attempts: 1,
          pageSize: this.pageSize,
          queries,
          ...(full ? {} : { modifiedSince: this.modifiedSince(endpoint) }),
        },
      );
    } catch (err) {
      this.logger?.debug({ broker: endpoint.url, err: (err as Error).message }, 'broker watcher: second read ended');
    }
  }

  /**
   * The entities of a page that changed: each numbered and listed (throws when one is listed twice in this
   * read), and judged, its records pushed to `out` (null: validated only). An entity whose bytes are those
   * listed at the same place last time needs no parse to be numbered, and no judging when it matched the chain
   * then and whose primary counterpart has not changed since (its settled key: its bytes' digest).
   */
  private lookInto(
    ctx: LookContext,
    page: RawPage,
    scan: ScannedPage,
    memo: PageMemo | undefined,
    out: ObservationRecord[] | null,
  ): Uint32Array {
    const { endpoint, scope, state, listed, result } = ctx;
    const numbers = new Uint32Array(scan.count);
    for (let k = 0; k < scan.count; k++) {
      let i = knownAt(memo, scan.raws, k);
      const at = DIGEST64_CHARS * k;
      if (i >= 0) {
        if (!listed.add(i)) throw listedTwice(endpoint.url, this.memory.entities.ref(i).id);
        numbers[k] = i;
        if (out === null || this.memory.isSettled(scope, i, scan.raws, at)) continue;
      }
      const e = scan.parse(k);
      result.parsedEntities++;
      if (isUnreadable(e)) {
        numbers[k] = UNREADABLE;
        this.unreadable(endpoint, ctx.unreadable, e);
        continue;
      }
      if (ownerQuery(ctx.queries, e.type) < page.queryIndex) {
        numbers[k] = REPEATED;
        continue;
      }
      if (i < 0) {
        i = this.memory.entities.intern(e.type, e.id);
        if (!listed.add(i)) throw listedTwice(endpoint.url, e.id);
        numbers[k] = i;
      }
      const digest = entityDigest(e);
      if (ctx.baseline && !state.sawAs(i, digest)) this.missed(endpoint, i, result);
      state.see(i, digest);
      if (out === null) continue;
      // Its primary counterpart could not be read this pass: nothing is decided about it.
      if (ctx.primaryUnreadable.ids.has(e.id)) continue;
      if (ctx.primaryUnreadable.anonymous && !this.primary.has(i)) continue;
      this.judge(scope, i, e, scan.raws, at, out);
    }
    return numbers;
  }

  /**
   * Judges one federated entity (its bytes' digest at `raws[at]`) against the primary and the memory; settles it
   * when nothing is to record.
   */
  private judge(
    scope: ScopeMemory,
    i: number,
    e: ObservedEntity,
    raws: string,
    at: number,
    out: ObservationRecord[],
  ): void {
    if (this.memory.isSettled(scope, i, raws, at)) return;
    const p = this.primary.entry(i);
    const observations = p && p.digest === entityDigest(e) ? allOk(e) : judge(p, e);
    const records = recordsFor(this.memory, scope, i, e, observations);
    if (records.length === 0) this.memory.settle(scope, i, raws, at);
    for (const r of records) out.push(r);
  }

  /** Records for a primary entity the federated broker does not list (TAMPERED, observed null). */
  private judgeMissing(scope: ScopeMemory, i: number): ObservationRecord[] {
    if (!this.primary.has(i) || this.memory.isSettled(scope, i, ABSENT, 0)) return [];
    const p = this.primary.entry(i);
    const records = recordsFor(this.memory, scope, i, this.memory.entities.ref(i), judge(p, undefined));
    if (records.length === 0) this.memory.settle(scope, i, ABSENT, 0);
    return records;
  }

  /** True when every entity of a remembered page still matches the chain under the same bytes and primary. */
  private settled(scope: ScopeMemory, memo: PageMemo): boolean {
    for (let k = 0; k < memo.entities.length; k++) {
      const i = memo.entities[k] as number;
      if (i === REPEATED) continue;
      if (i === UNREADABLE) return false;
      if (!this.memory.isSettled(scope, i, memo.raws, DIGEST64_CHARS * k)) return false;
    }
    return true;
  }

  /** Hands records to the node as the mempool makes room for them (backpressure); stops when the watcher stops. */
  private async offer(
    records: readonly ObservationRecord[],
    result: Pick<PassResult, 'submitted' | 'waitedMs'>,
  ): Promise<void> {
    for (let i = 0; i < records.length && !this.stopping; ) {
      const room = this.ports.room();
      if (room <= 0) {
        const t = this.now();
        await (this.ports.roomChanged?.() ?? new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS)));
        result.waitedMs += this.now() - t;
        continue;
      }
      const slice = records.slice(i, i + Math.min(room, SUBMIT_SLICE));
      this.ports.submit(slice);
      for (const r of slice) {
        if (r.verdict === 'TAMPERED') result.submitted.tampered++;
        else result.submitted.ok++;
      }
      i += slice.length;
      // Yield between slices: the node keeps answering consensus messages meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}

/** What judging one page of a federated broker needs. */
interface LookContext {
  endpoint: BrokerEndpoint;
  scope: ScopeMemory;
  state: FederatedState;
  listed: EntitySet;
  result: PassResult;
  /** Whether a change found now is a missed one (a complete read of the broker was judged before). */
  baseline: boolean;
  queries: readonly ListingQuery[];
  unreadable: Unreadable;
  primaryUnreadable: Unreadable;
}

/** The records, TAMPERED before OK (each in its order). */
function tamperedFirst(records: ObservationRecord[]): ObservationRecord[] {
  const tampered = records.filter((r) => r.verdict === 'TAMPERED');
  return tampered.length === 0 ? records : [...tampered, ...records.filter((r) => r.verdict !== 'TAMPERED')];
}

export type { EntityRef };
