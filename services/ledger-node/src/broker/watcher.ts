// The broker watcher: every poll interval, one comparison pass — read the primary completely, then
// each federated broker completely, judge every entity against the primary, and hand the records the
// chain does not hold yet to the node (its mempool, which gossips them to the peers). One pass at a
// time; a broker that could not be read completely records nothing for this pass.
//
// The node calls `applyFinalized` for every finalized block (also when it replays its chain on
// start), which is how the memory of what is already recorded stays the chain's.
//
// Records go out TAMPERED first, and never more than the mempool has room for: the first pass of a
// large deployment notarises its millions of OK observations over several passes, while a tamper is
// never stuck behind them.
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { WatcherConfig } from './config.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import { type BrokerHttp, createBrokerHttp } from './http-client.ts';
import { readBrokerPages } from './listing.ts';
import { ObservationMemory } from './memory.ts';
import type { WatcherMetrics } from './metrics.ts';
import { recordsFor } from './notary.ts';
import { BrokerReadError, type BrokerReadReason } from './read-error.ts';
import { isObservationRecord, type ObservationRecord, type ObservationScope } from './record.ts';
import { BrokerComparison, PrimaryIndex } from './verdict.ts';

/** Records handed to the mempool at once (a first pass may have millions). */
const SUBMIT_SLICE = 2000;

/** What the watcher needs from the node. */
export interface WatcherPorts {
  /** Offers records to the mempool (which gossips the new ones); returns how many were new. */
  submit(records: ObservationRecord[]): number;
  /** How many more records the mempool takes now. */
  room(): number;
  /** False while the node is catching up with its peers: a pass then waits (its memory would be stale). */
  ready?(): boolean;
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
  submitted: { ok: number; tampered: number };
  /** Records left for a later pass because the mempool was full. */
  deferred: number;
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
}

export class Watcher {
  readonly config: WatcherConfig;
  readonly memory = new ObservationMemory();
  private readonly ports: WatcherPorts;
  private readonly http: BrokerHttp;
  private readonly ownsHttp: boolean;
  private readonly logger: Logger | undefined;
  private readonly metrics: WatcherMetrics | undefined;
  private readonly now: () => number;
  private readonly statuses = new Map<string, BrokerStatus>();
  private lastPass: PassResult | undefined;
  private passes = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<PassResult> | undefined;
  private stopped = true;

  constructor(config: WatcherConfig, ports: WatcherPorts, options: WatcherOptions = {}) {
    this.config = config;
    this.ports = ports;
    this.ownsHttp = !options.http;
    this.http = options.http ?? createBrokerHttp({ ca: config.ca });
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.now = options.now ?? Date.now;
    for (const b of [config.primary, ...config.federated])
      this.statuses.set(b.url, { url: b.url, role: b.role, ok: false });
  }

  /** Applies the watcher's records of a finalized block to the memory. */
  applyFinalized(records: readonly IntegrityRecord[], height: number): void {
    for (const r of records) if (isObservationRecord(r)) this.memory.apply(r);
    if (height > this.memory.height) this.memory.height = height;
  }

  /** Starts passes every poll interval (the first at once). */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const started = this.now();
      this.pass()
        .catch((err: unknown) => this.logger?.error({ err }, 'broker watcher: pass failed'))
        .finally(() => this.schedule(Math.max(0, this.config.pollIntervalMs - (this.now() - started))));
    }, delayMs);
  }

  /** Stops after the pass in progress (if any). */
  async stop(): Promise<void> {
    this.stopped = true;
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
      deferred: 0,
    };
    let primary = new PrimaryIndex();
    try {
      await readBrokerPages(this.http, this.config.primary, (page) => primary.add(page), {
        onRestart: () => {
          primary = new PrimaryIndex();
        },
      });
      this.readOk(this.config.primary, primary.size);
      result.primaryRead = true;
    } catch (err) {
      this.readFailed(this.config.primary, err);
    }
    if (result.primaryRead) {
      for (const federated of this.config.federated) {
        const { tampered, ok, deferred } = await this.compare(primary, federated);
        result.deferred += deferred;
        // TAMPERED first; then OK observations as long as the mempool has room.
        const room = this.ports.room();
        const send = [...tampered, ...ok].slice(0, Math.max(0, room));
        result.deferred += tampered.length + ok.length - send.length;
        // In slices, yielding between them: the node keeps answering consensus messages meanwhile.
        for (let i = 0; i < send.length; i += SUBMIT_SLICE) {
          this.ports.submit(send.slice(i, i + SUBMIT_SLICE));
          await new Promise((resolve) => setImmediate(resolve));
        }
        for (const r of send) {
          if (r.verdict === 'TAMPERED') result.submitted.tampered++;
          else result.submitted.ok++;
        }
      }
    }
    result.durationMs = this.now() - startedAt;
    this.lastPass = result;
    this.passes++;
    this.metrics?.passSeconds.observe(result.durationMs / 1000);
    this.metrics?.recordsSubmitted.inc({ verdict: 'OK' }, result.submitted.ok);
    this.metrics?.recordsSubmitted.inc({ verdict: 'TAMPERED' }, result.submitted.tampered);
    this.logger?.debug({ ...result }, 'broker watcher: pass');
    return result;
  }

  /** Reads one federated broker completely and returns the records it needs (nothing on a failed read). */
  private async compare(
    primary: PrimaryIndex,
    endpoint: BrokerEndpoint,
  ): Promise<{ tampered: ObservationRecord[]; ok: ObservationRecord[]; deferred: number }> {
    const scope = this.scope(endpoint);
    const comparison = new BrokerComparison(primary);
    // Buffer at most what the mempool can take now; TAMPERED records displace OK ones.
    const cap = Math.max(0, this.ports.room());
    let tampered: ObservationRecord[] = [];
    let ok: ObservationRecord[] = [];
    let deferred = 0;
    let entities = 0;
    const take = (records: ObservationRecord[]) => {
      for (const r of records) {
        if (r.verdict === 'TAMPERED') {
          if (tampered.length < cap) {
            tampered.push(r);
            if (tampered.length + ok.length > cap) {
              ok.pop();
              deferred++;
            }
          } else deferred++;
        } else if (tampered.length + ok.length < cap) ok.push(r);
        else deferred++;
      }
    };
    try {
      await readBrokerPages(
        this.http,
        endpoint,
        (page) => {
          entities += page.length;
          for (const e of comparison.page(page))
            take(recordsFor(this.memory, scope, e, tampered.length + ok.length < cap));
        },
        {
          onRestart: () => {
            comparison.restart();
            tampered = [];
            ok = [];
            deferred = 0;
            entities = 0;
          },
        },
      );
    } catch (err) {
      this.readFailed(endpoint, err);
      return { tampered: [], ok: [], deferred: 0 };
    }
    for (const e of comparison.missing()) take(recordsFor(this.memory, scope, e, tampered.length + ok.length < cap));
    this.readOk(endpoint, entities);
    return { tampered, ok, deferred };
  }
}
