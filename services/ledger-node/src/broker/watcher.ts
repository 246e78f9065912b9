// The broker watcher: every poll interval, one comparison pass — read the primary completely, then
// each federated broker completely, judge every entity against the primary, and hand the records the
// chain does not hold yet to the node (its mempool, which gossips them to the peers). One pass at a
// time; a broker that could not be read completely records nothing for this pass. The validators spread their
// passes over the interval (`phase`, `nextPassAt`): a change is found by whichever passes next, and its record,
// whose id comes from its content, is the same whoever finds it.
//
// The node calls `applyFinalized` for every finalized block (also when it replays its chain on
// start), which is how the memory of what is already recorded stays the chain's.
//
// Cheap when nothing changed: every page of every listing is digested as it arrives (digest.ts); a page whose
// bytes are those of the last pass, listing entities that all still match the chain, is neither parsed nor
// judged. A page that changed is split into its entities' bytes (page-elements.ts), each digested: only an
// entity whose bytes or primary counterpart changed is parsed and judged against the memory (memory.ts's
// settled keys), so a tamper spread over every page costs a scan of each page, not a parse of it.
//
// Bounded while there is much to record (a first pass notarises every observation): the records of one broker
// are kept until its read is complete (never recorded from a partial read) up to BUFFER_MAX; past that the
// read goes on validating only, and once complete the broker is read a second time from the page where the
// buffer filled, judging and handing records over page by page. Records are handed over only while the
// mempool has room (`room()`, the node's window): the pass waits for consensus to drain it (backpressure),
// so the watcher never holds more than a page and a buffer, nor floods the node. TAMPERED records go first.
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { WatcherConfig } from './config.ts';
import { ABSENT, DIGEST64_CHARS, digestBytes } from './digest.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { EntitySet } from './entities.ts';
import { type BrokerHttp, createBrokerHttp } from './http-client.ts';
import { listedTwice, type RawPage, readRawPages, type ScannedPage, scanPage } from './listing.ts';
import { ObservationMemory, type ScopeMemory } from './memory.ts';
import type { WatcherMetrics } from './metrics.ts';
import { recordsFor } from './notary.ts';
import type { ObservedEntity } from './observe.ts';
import { knownAt, type PageMemo, PrimaryState } from './primary.ts';
import { BrokerReadError, type BrokerReadReason } from './read-error.ts';
import { isObservationRecord, type ObservationRecord, type ObservationScope } from './record.ts';
import { allOk, entityDigest, judge } from './verdict.ts';

/** Records handed to the mempool at once. */
const SUBMIT_SLICE = 2000;
/** Records of one broker kept until its read is complete; beyond, a second read hands them over page by page. */
export const BUFFER_MAX = 32_768;
/** How often a pass waiting for room asks again, when the node does not say. */
const ROOM_POLL_MS = 50;
/** A pass that found the node catching up tries again this soon. */
const NOT_SYNCED_RETRY_MS = 1000;

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
   * Where in each poll interval this node's passes start, as a fraction in [0, 1): the validators spread their
   * passes over the interval (nextPassAt), so one of them looks soon after any change. Default 0.
   */
  phase?(): number;
}

/**
 * When the next pass starts: the first start of this node's slot (`phase` of the interval after each multiple of
 * the poll interval on the clock) at or after `now`. The validators' passes thus keep their places in the interval
 * whatever their start times and pass durations: with n of them at phases 0, 1/n, …, a change waits at most
 * poll/n for a pass to begin, not up to a whole interval.
 * @example nextPassAt(12_300, 10_000, 0.25) // 12_500
 */
export function nextPassAt(now: number, pollIntervalMs: number, phase: number): number {
  const offset = Math.floor(Math.min(Math.max(phase, 0), 1) * pollIntervalMs) % pollIntervalMs;
  const base = now - offset;
  const slot = Math.ceil(base / pollIntervalMs) * pollIntervalMs;
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
}

export interface PassResult {
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
}

export interface WatcherStatus {
  brokers: BrokerStatus[];
  lastPass?: PassResult;
  passes: number;
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
}

export class Watcher {
  readonly config: WatcherConfig;
  readonly memory = new ObservationMemory();
  private readonly primary = new PrimaryState(this.memory.entities);
  /** Per federated broker: its pages as last read (whether their entities match the chain is the memory's). */
  private readonly federatedPages = new Map<string, Map<number, PageMemo>>();
  private readonly ports: WatcherPorts;
  private readonly http: BrokerHttp;
  private readonly ownsHttp: boolean;
  private readonly logger: Logger | undefined;
  private readonly metrics: WatcherMetrics | undefined;
  private readonly now: () => number;
  private readonly bufferMax: number;
  private readonly pageSize: number | undefined;
  private readonly statuses = new Map<string, BrokerStatus>();
  private lastPass: PassResult | undefined;
  private passes = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PassResult> | undefined;
  private stopped = true;
  private stopping = false;

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
    for (const b of [config.primary, ...config.federated])
      this.statuses.set(b.url, { url: b.url, role: b.role, ok: false });
  }

  /** Applies the watcher's records of a finalized block to the memory. */
  applyFinalized(records: readonly IntegrityRecord[], height: number): void {
    for (const r of records) if (isObservationRecord(r)) this.memory.apply(r);
    if (height > this.memory.height) this.memory.height = height;
  }

  /** Starts passes every poll interval, each at this node's place in it (the first at once). */
  start(): void {
    this.stopped = false;
    this.stopping = false;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const untilNextSlot = () => {
        let phase = 0;
        try {
          phase = this.ports.phase?.() ?? 0;
        } catch (err) {
          this.logger?.warn({ err }, 'broker watcher: no phase; the next pass starts at the top of the interval');
        }
        const now = this.now();
        return nextPassAt(now, this.config.pollIntervalMs, phase) - now;
      };
      this.pass()
        .then(
          (r) => (r.skipped ? Math.min(NOT_SYNCED_RETRY_MS, this.config.pollIntervalMs) : untilNextSlot()),
          (err: unknown) => {
            this.logger?.error({ err }, 'broker watcher: pass failed');
            return untilNextSlot();
          },
        )
        .then((next) => this.schedule(next));
    }, delayMs);
  }

  /** Stops after the pass in progress (if any; a pass waiting for room ends at once). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    if (this.ownsHttp) await this.http.close();
  }

  status(): WatcherStatus {
    return {
      brokers: [...this.statuses.values()].map((s) => ({ ...s })),
      ...(this.lastPass ? { lastPass: { ...this.lastPass } } : {}),
      passes: this.passes,
    };
  }

  /** One comparison pass (the timer runs these; tests and the benchmark may call it directly). */
  pass(): Promise<PassResult> {
    if (!this.running) this.running = this.runPass().finally(() => (this.running = undefined));
    return this.running;
  }

  private scope(endpoint: BrokerEndpoint): ObservationScope {
    return { broker: endpoint.url, service: endpoint.service, servicePath: endpoint.servicePath };
  }

  private readOk(endpoint: BrokerEndpoint, entities: number): void {
    this.statuses.set(endpoint.url, {
      url: endpoint.url,
      role: endpoint.role,
      ok: true,
      lastReadAt: this.now(),
      entities,
    });
    this.metrics?.brokerUp.set({ broker: endpoint.url }, 1);
    this.metrics?.brokerEntities.set({ broker: endpoint.url }, entities);
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
    });
    this.metrics?.brokerUp.set({ broker: endpoint.url }, 0);
    this.metrics?.readFailures.inc({ broker: endpoint.url, reason: e.reason });
    this.logger?.warn(
      { broker: endpoint.url, role: endpoint.role, reason: e.reason, detail: e.message },
      'broker watcher: broker not read completely; nothing recorded for it this pass',
    );
  }

  private async runPass(): Promise<PassResult> {
    const startedAt = this.now();
    const result: PassResult = {
      startedAt,
      durationMs: 0,
      primaryRead: false,
      submitted: { ok: 0, tampered: 0 },
      waitedMs: 0,
      pages: 0,
      parsedPages: 0,
      parsedEntities: 0,
    };
    if (this.ports.ready && !this.ports.ready()) return { ...result, skipped: 'not_synced' };
    result.primaryRead = await this.readPrimary(result);
    if (result.primaryRead) for (const federated of this.config.federated) await this.compare(federated, result);
    result.durationMs = this.now() - startedAt;
    this.lastPass = result;
    this.passes++;
    this.metrics?.passSeconds.observe(result.durationMs / 1000);
    this.metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    this.metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
    this.logger?.debug({ ...result }, 'broker watcher: pass');
    return result;
  }

  /** Reads the primary completely into the primary state; false (and nothing recorded this pass) on failure. */
  private async readPrimary(result: PassResult): Promise<boolean> {
    const endpoint = this.config.primary;
    let total = 0;
    this.primary.beginRead();
    try {
      await readRawPages(
        this.http,
        endpoint,
        (page) => {
          total = page.total;
          result.pages++;
          const parsed = this.primary.page(endpoint, page);
          if (parsed !== null) {
            result.parsedPages++;
            result.parsedEntities += parsed;
          }
        },
        { pageSize: this.pageSize, onRestart: () => this.primary.beginRead() },
      );
    } catch (err) {
      this.readFailed(endpoint, err);
      return false;
    }
    this.primary.endRead();
    this.readOk(endpoint, total);
    return true;
  }

  /**
   * Reads one federated broker completely and hands over the records it needs; nothing for a read that fails.
   */
  private async compare(endpoint: BrokerEndpoint, result: PassResult): Promise<void> {
    const scope = this.memory.scope(this.scope(endpoint));
    const memos = this.federatedPages.get(endpoint.url) ?? new Map<number, PageMemo>();
    this.federatedPages.set(endpoint.url, memos);
    let listed = new EntitySet();
    let buffer: ObservationRecord[] = [];
    let overflowAt: number | undefined;
    let digests = new Map<number, string>();
    let total = 0;
    let lastOffset = -1;
    const onPage = (page: RawPage) => {
      total = page.total;
      lastOffset = page.offset;
      result.pages++;
      const digest = digestBytes(page.body);
      digests.set(page.offset, digest);
      const memo = memos.get(page.offset);
      if (memo && memo.digest === digest && memo.entities.length === page.expected && this.settled(scope, memo)) {
        for (const i of memo.entities)
          if (!listed.add(i)) throw listedTwice(endpoint.url, this.memory.entities.ref(i).id);
        return;
      }
      result.parsedPages++;
      const scan = scanPage(endpoint, page);
      if (overflowAt !== undefined) {
        this.lookInto(endpoint, scope, scan, memo, listed, result, null); // validated; judged by the second read
        return;
      }
      const before = buffer.length;
      const numbers = this.lookInto(endpoint, scope, scan, memo, listed, result, buffer);
      if (buffer.length > this.bufferMax) {
        buffer.length = before;
        overflowAt = page.offset;
        return;
      }
      memos.set(page.offset, { digest, entities: numbers, raws: scan.raws });
    };
    try {
      await readRawPages(this.http, endpoint, onPage, {
        pageSize: this.pageSize,
        onRestart: () => {
          listed = new EntitySet();
          buffer = [];
          overflowAt = undefined;
          digests = new Map();
        },
      });
    } catch (err) {
      this.readFailed(endpoint, err);
      return;
    }
    for (const offset of memos.keys()) if (offset > lastOffset) memos.delete(offset);
    this.readOk(endpoint, total);
    await this.offer(tamperedFirst(buffer), result);
    buffer = [];
    // What the federated broker lacks: every primary entity it did not list.
    let missing: ObservationRecord[] = [];
    for (const i of this.primary.members()) {
      if (listed.has(i)) continue;
      for (const r of this.judgeMissing(scope, i)) missing.push(r);
      if (missing.length >= SUBMIT_SLICE) {
        await this.offer(missing, result);
        missing = [];
      }
    }
    await this.offer(missing, result);
    if (overflowAt !== undefined) await this.secondRead(endpoint, scope, memos, digests, overflowAt, result);
  }

  /**
   * After a complete read whose records did not fit the buffer: reads the broker again from `from`, judging
   * each page whose bytes are those the complete read saw and handing its records over at once (a page that
   * changed since is left to the next pass). Ends quietly on a failure: the next pass goes on.
   */
  private async secondRead(
    endpoint: BrokerEndpoint,
    scope: ScopeMemory,
    memos: Map<number, PageMemo>,
    digests: Map<number, string>,
    from: number,
    result: PassResult,
  ): Promise<void> {
    try {
      await readRawPages(
        this.http,
        endpoint,
        async (page) => {
          if (this.stopping) throw new BrokerReadError(endpoint.url, 'inconsistent', 'watcher stopping');
          result.pages++;
          const digest = digestBytes(page.body);
          if (digests.get(page.offset) !== digest) return;
          result.parsedPages++;
          const scan = scanPage(endpoint, page);
          const records: ObservationRecord[] = [];
          const memo = memos.get(page.offset);
          const numbers = this.lookInto(endpoint, scope, scan, memo, new EntitySet(), result, records);
          memos.set(page.offset, { digest, entities: numbers, raws: scan.raws });
          await this.offer(tamperedFirst(records), result);
        },
        { from, attempts: 1, pageSize: this.pageSize },
      );
    } catch (err) {
      this.logger?.debug({ broker: endpoint.url, err: (err as Error).message }, 'broker watcher: second read ended');
    }
  }

  /**
   * The entities of a page that changed: each numbered and listed (throws when one is listed twice in this
   * read), and judged, its records pushed to `out` (null: validated only). An entity whose bytes are those
   * listed at the same place last time needs no parse to be numbered, and no judging when it matched the chain
   * then under the primary entity it has now (its settled key: its bytes' digest and the primary's).
   */
  private lookInto(
    endpoint: BrokerEndpoint,
    scope: ScopeMemory,
    scan: ScannedPage,
    memo: PageMemo | undefined,
    listed: EntitySet,
    result: PassResult,
    out: ObservationRecord[] | null,
  ): Uint32Array {
    const numbers = new Uint32Array(scan.count);
    for (let k = 0; k < scan.count; k++) {
      let i = knownAt(memo, scan.raws, k);
      const at = DIGEST64_CHARS * k;
      if (i >= 0) {
        if (!listed.add(i)) throw listedTwice(endpoint.url, this.memory.entities.ref(i).id);
        numbers[k] = i;
        if (out === null || this.memory.isSettled(scope, i, scan.raws, at, this.primary.keyOf(i))) continue;
      }
      const e = scan.parse(k);
      result.parsedEntities++;
      if (i < 0) {
        i = this.memory.entities.intern(e.type, e.id);
        if (!listed.add(i)) throw listedTwice(endpoint.url, e.id);
        numbers[k] = i;
      }
      if (out !== null) this.judge(scope, i, e, scan.raws, at, out);
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
    const primaryKey = this.primary.keyOf(i);
    if (this.memory.isSettled(scope, i, raws, at, primaryKey)) return;
    const p = this.primary.entry(i);
    const observations = p && p.digest === entityDigest(e) ? allOk(e) : judge(p, e);
    const records = recordsFor(this.memory, scope, i, e, observations);
    if (records.length === 0) this.memory.settle(scope, i, raws, at, primaryKey);
    for (const r of records) out.push(r);
  }

  /** Records for a primary entity the federated broker does not list (TAMPERED, observed null). */
  private judgeMissing(scope: ScopeMemory, i: number): ObservationRecord[] {
    const primaryKey = this.primary.keyOf(i);
    if (primaryKey === ABSENT || this.memory.isSettled(scope, i, ABSENT, 0, primaryKey)) return [];
    const p = this.primary.entry(i);
    const records = recordsFor(this.memory, scope, i, this.memory.entities.ref(i), judge(p, undefined));
    if (records.length === 0) this.memory.settle(scope, i, ABSENT, 0, primaryKey);
    return records;
  }

  /** True when every entity of a remembered page still matches the chain under the same bytes and primary. */
  private settled(scope: ScopeMemory, memo: PageMemo): boolean {
    for (let k = 0; k < memo.entities.length; k++) {
      const i = memo.entities[k] as number;
      if (!this.memory.isSettled(scope, i, memo.raws, DIGEST64_CHARS * k, this.primary.keyOf(i))) return false;
    }
    return true;
  }

  /** Hands records to the node as the mempool makes room for them (backpressure); stops when the watcher stops. */
  private async offer(records: readonly ObservationRecord[], result: PassResult): Promise<void> {
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

/** The records, TAMPERED before OK (each in its order). */
function tamperedFirst(records: ObservationRecord[]): ObservationRecord[] {
  const tampered = records.filter((r) => r.verdict === 'TAMPERED');
  return tampered.length === 0 ? records : [...tampered, ...records.filter((r) => r.verdict !== 'TAMPERED')];
}
