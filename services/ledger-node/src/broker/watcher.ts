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
//
// This class wires the parts and owns start, stop and the status; each part has one job:
//   pass-schedule.ts    when passes run, and of which kind
//   sweep.ts            one pass: the brokers read page by page, each page to the comparer
//   comparer.ts         entities judged against the primary and the memory, into records (no I/O)
//   submitter.ts        records handed to the node as its mempool makes room (backpressure)
//   notified-intake.ts  notifications taken, their entities queued (bounded) and judged in batches
//   missed-changes.ts   changes a sweep found unannounced: suspects, then counted missed
//   broker-reads.ts     reads by id, the brokers' clocks, what a read could not read
//   status.ts           /watch's shapes and each broker's last read
//   ports.ts            what the parts need from the node (submit, room, ready, phase, the clock, log, metrics)
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import { ReadClocks } from './broker-reads.ts';
import { Comparer } from './comparer.ts';
import type { WatcherConfig } from './config.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { FederatedState } from './federated.ts';
import { type BrokerHttp, createBrokerHttp } from './http-client.ts';
import { ObservationMemory } from './memory.ts';
import type { WatcherMetrics } from './metrics.ts';
import { MISSED_GRACE_MS } from './missed-changes.ts';
import { Mutex } from './mutex.ts';
import { NotifiedIntake, PRIMARY_CHANGE_GRACE_MS } from './notified-intake.ts';
import { PassScheduler } from './pass-schedule.ts';
import type { WatcherPorts } from './ports.ts';
import { PrimaryState } from './primary.ts';
import { isObservationRecord } from './record.ts';
import { BrokerStatuses, type NotifyResult, newPassResult, type PassResult, type WatcherStatus } from './status.ts';
import { Submitter } from './submitter.ts';
import { Subscriber } from './subscriber.ts';
import { BUFFER_MAX, Sweep } from './sweep.ts';

export { MISSED_GRACE_MS } from './missed-changes.ts';
// The names this module has always exported, from the parts that now hold them.
export type { EntityRef } from './notification.ts';
export { PRIMARY_CHANGE_GRACE_MS } from './notified-intake.ts';
export { FULL_SWEEP_EVERY, nextPassAt } from './pass-schedule.ts';
export type { WatcherPorts } from './ports.ts';
export type { BrokerStatus, NotifiedStatus, NotifyResult, PassResult, WatcherStatus } from './status.ts';
export { BUFFER_MAX } from './sweep.ts';

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
  private readonly statuses: BrokerStatuses;
  private readonly clocks: ReadClocks;
  /** Subscribe mode only. */
  private readonly subscriber: Subscriber | undefined;
  private readonly scheduler: PassScheduler;
  private readonly sweep: Sweep;
  private readonly intake: NotifiedIntake;
  private lastPass: PassResult | undefined;
  private passes = 0;
  private running: Promise<PassResult> | undefined;
  private stopping = false;

  constructor(config: WatcherConfig, ports: WatcherPorts, options: WatcherOptions = {}) {
    this.config = config;
    this.ports = ports;
    this.ownsHttp = !options.http;
    this.http = options.http ?? createBrokerHttp({ ca: config.ca });
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.now = options.now ?? Date.now;
    this.memory.primary = this.primary;
    const brokers = [config.primary, ...config.federated];
    const subscribe = config.mode === 'subscribe';
    const { http, logger: log, metrics, now } = this;
    const stopping = () => this.stopping;
    for (const f of config.federated) this.federated.set(f.url, new FederatedState());
    this.statuses = new BrokerStatuses(brokers, { now, log, metrics });
    this.clocks = new ReadClocks(now);
    this.scheduler = new PassScheduler({
      intervalMs: subscribe ? config.sweepIntervalMs : config.pollIntervalMs,
      subscribe,
      ports,
      now,
      log,
      pass: () => this.pass(),
      busy: () => this.running !== undefined,
    });
    if (subscribe)
      this.subscriber = new Subscriber(brokers, http, {
        notifyUrl: config.notifyUrl,
        nodeKey: options.nodeKey ?? 'unnamed',
        checkMs: config.subscriptionCheckMs,
        logger: this.logger,
        metrics,
        now,
        onRecreated: () => this.scheduler.sweepSoon('a subscription was made again'),
      });
    // A change a sweep found: a suspected missed change (subscribe mode), unless a notification announced it.
    const missed = (endpoint: BrokerEndpoint, i: number, result: PassResult): void => {
      if (!subscribe) return;
      const { id, type } = this.memory.entities.ref(i);
      if (this.intake.missed.found(endpoint.url, type, id)) result.missedChanges++;
    };
    const comparer = new Comparer({ memory: this.memory, primary: this.primary, federated: this.federated, missed });
    const submitter = new Submitter({ ports, now, stopping });
    const stateLock = new Mutex();
    this.sweep = new Sweep({
      config,
      http,
      memory: this.memory,
      primary: this.primary,
      federated: this.federated,
      comparer,
      submitter,
      statuses: this.statuses,
      clocks: this.clocks,
      missed,
      subscriber: this.subscriber,
      stateLock,
      bufferMax: options.bufferMax ?? BUFFER_MAX,
      pageSize: options.pageSize,
      log,
      stopping,
    });
    this.intake = new NotifiedIntake({
      config,
      http,
      comparer,
      submitter,
      subscriber: this.subscriber,
      stateLock,
      ports,
      now,
      log,
      metrics,
      stopping,
      maxPendingEntities: options.maxPendingEntities,
      primaryGraceMs: options.primaryGraceMs ?? PRIMARY_CHANGE_GRACE_MS,
      missedGraceMs: options.missedGraceMs ?? MISSED_GRACE_MS,
      sweepSoon: (why) => this.scheduler.sweepSoon(why),
    });
  }

  /** Applies the watcher's records of a finalized block to the memory. */
  applyFinalized(records: readonly IntegrityRecord[], height: number): void {
    for (const r of records) if (isObservationRecord(r)) this.memory.apply(r);
    if (height > this.memory.height) this.memory.height = height;
  }

  /** Starts passes (sweeps) every interval, each at this node's place in it (the first at once); subscribes. */
  start(): void {
    this.stopping = false;
    this.scheduler.start();
    this.subscriber?.start().catch((err: unknown) => this.logger?.error({ err }, 'broker watcher: subscribing failed'));
  }

  /** Stops after the pass in progress (if any; a pass waiting for room ends at once); removes the subscriptions. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.scheduler.stop();
    const worker = this.intake.stop();
    await this.running?.catch(() => undefined);
    await worker;
    await this.subscriber?.stop();
    if (this.ownsHttp) await this.http.close();
  }

  status(): WatcherStatus {
    const subscribe = this.config.mode === 'subscribe';
    const { missed } = this.intake;
    const nextPassAt = this.scheduler.nextPassAt;
    return {
      mode: this.config.mode,
      brokers: this.statuses.list().map((s) => ({
        ...s,
        ...(subscribe ? { subscription: this.subscriber?.status(s.url), missedChanges: missed.missedOn(s.url) } : {}),
      })),
      ...(this.lastPass ? { lastPass: { ...this.lastPass } } : {}),
      passes: this.passes,
      ...(subscribe
        ? { missedChanges: missed.missed, suspectedChanges: missed.suspected, notified: this.intake.status() }
        : {}),
      ...(nextPassAt !== undefined ? { nextPassAt } : {}),
    };
  }

  /** Bytes the watcher's per-entity state holds in typed arrays (the benchmark's account of its memory). */
  stateBytes(): number {
    let n = this.memory.byteLength + this.primary.byteLength;
    for (const f of this.federated.values()) n += f.byteLength;
    return n;
  }

  /**
   * A notification POSTed on `channel` with the secret `token` (subscribe mode): authenticated, read, and its
   * entities queued to be judged. Answers at once; the judging happens after.
   */
  notify(channel: string, token: string | undefined, body: unknown): NotifyResult {
    return this.intake.notify(channel, token, body);
  }

  /** One comparison pass (the timer runs these; tests and the benchmark may call it directly). */
  pass(kind?: 'full' | 'incremental'): Promise<PassResult> {
    if (!this.running) this.running = this.runPass(kind).finally(() => (this.running = undefined));
    return this.running;
  }

  /** Every broker can be read incrementally, and was read completely once. */
  private incrementalReady(): boolean {
    const able = this.clocks.incrementalAble([this.config.primary, ...this.config.federated]);
    return able && this.primary.baseline && [...this.federated.values()].every((f) => f.baseline);
  }

  private async runPass(asked?: 'full' | 'incremental'): Promise<PassResult> {
    const kind = this.scheduler.kind(asked, () => this.incrementalReady());
    const startedAt = this.now();
    const result = newPassResult(kind, startedAt);
    if (this.ports.ready && !this.ports.ready()) return { ...result, skipped: 'not_synced' };
    this.scheduler.began(kind);
    await this.sweep.run(result);
    if (result.primaryRead) {
      this.scheduler.ended(kind);
      // What overflowed before this pass began, this pass has read; and what changed before a subscription was
      // made, a pass begun after it has found (only later misses can tell that a subscription is silent).
      this.intake.missed.passRead(startedAt);
      this.subscriber?.passRead(startedAt, this.now());
    }
    result.durationMs = this.now() - startedAt;
    this.lastPass = result;
    this.passes++;
    this.metrics?.passSeconds.observe({ kind }, result.durationMs / 1000);
    this.metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    this.metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
    this.logger?.debug({ ...result }, 'broker watcher: pass');
    return result;
  }
}
