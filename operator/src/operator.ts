import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { Gauge } from 'prom-client';
import type { LedgerCluster, LedgerClusterSpec } from './api/index.ts';
import { LedgerClusterController, type NodeApi } from './controllers/ledger-cluster/index.ts';
import { TranslationServiceController } from './controllers/translation-service/index.ts';
import type { KubeClient } from './kube/client.ts';
import { EventRecorder } from './kube/events.ts';
import { LeaderElector } from './kube/leader-election.ts';
import { LedgerNodeClient } from './ledger/index.ts';
import { createMetrics, type Metrics } from './metrics.ts';

export interface OperatorOptions {
  client: KubeClient;
  log: Logger;
  identity: string;
  /** Namespace of the leader Lease. */
  leaseNamespace: string;
  leaseName?: string;
  leaderElection?: boolean;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  watchNamespace?: string;
  concurrency?: number;
  resyncMs?: number;
  /** Port of /healthz, /readyz and /metrics; undefined = no HTTP server (tests). */
  httpPort?: number;
  httpHost?: string;
  /** Ledger node API client factory (default: LedgerNodeClient, 3 s per call). */
  ledgerNodeApi?: (opts: {
    token?: string;
    caPem?: string;
    clientCert?: { certPem: string; keyPem: string };
  }) => NodeApi;
  /** Base URL of a ledger validator (default: its Service DNS name, `http(s)://<validator>.<ns>.svc:8000`). */
  ledgerNodeUrl?: (lc: LedgerCluster, spec: LedgerClusterSpec, validator: string) => string;
  /** Clock of the LedgerCluster reconciler (certificate issue and renewal, genesis time); tests move it. */
  ledgerNow?: () => Date;
  /** Called when the Lease is lost; main.ts exits so the pod restarts clean. */
  onLostLeadership?: () => void;
}

/**
 * The operator process: leader election, the controllers (only while leading), and one HTTP server for
 * probes and metrics. A passive replica answers probes but reconciles nothing.
 */
export class Operator {
  readonly metrics: Metrics;
  readonly controller: TranslationServiceController;
  readonly ledger: LedgerClusterController;
  readonly #o: OperatorOptions;
  readonly #elector: LeaderElector | undefined;
  readonly #abort = new AbortController();
  #server: http.Server | undefined;
  #started = false;
  #electing: Promise<void> | undefined;
  #leading = false;

  constructor(options: OperatorOptions) {
    this.#o = options;
    this.metrics = createMetrics(undefined, { defaults: options.httpPort !== undefined });
    const counts = options.client.counts;
    new Gauge({
      name: 'scriptorium_operator_api_requests',
      help: 'Requests this process sent to the Kubernetes API, by verb (WATCH = watch streams opened).',
      labelNames: ['verb'],
      registers: [this.metrics.registry],
      collect() {
        for (const [verb, n] of Object.entries(counts)) this.labels(verb).set(n);
      },
    });
    const common = {
      client: options.client,
      recorder: new EventRecorder(options.client, options.identity, { log: options.log }),
      log: options.log,
      metrics: this.metrics,
      namespace: options.watchNamespace,
      concurrency: options.concurrency,
      resyncMs: options.resyncMs,
    };
    this.controller = new TranslationServiceController(common);
    this.ledger = new LedgerClusterController({
      ...common,
      nodeApi: options.ledgerNodeApi ?? ((opts) => new LedgerNodeClient({ ...opts, timeoutMs: 3000 })),
      nodeUrl: options.ledgerNodeUrl,
      now: options.ledgerNow,
    });
    if (options.leaderElection !== false) {
      this.#elector = new LeaderElector(options.client, {
        namespace: options.leaseNamespace,
        name: options.leaseName ?? 'scriptorium-operator',
        identity: options.identity,
        leaseDurationMs: options.leaseDurationMs,
        renewDeadlineMs: options.renewDeadlineMs,
        retryPeriodMs: options.retryPeriodMs,
        log: options.log,
      });
    }
  }

  /** True while this replica reconciles. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /** Ready: a passive replica is always ready; a leader once its caches have synced. */
  get ready(): boolean {
    return !this.#leading || (this.controller.synced && this.ledger.synced);
  }

  get port(): number | undefined {
    return (this.#server?.address() as AddressInfo | null)?.port;
  }

  async start(): Promise<void> {
    if (this.#o.httpPort !== undefined) await this.#listen(this.#o.httpPort, this.#o.httpHost ?? '0.0.0.0');
    const lead = () => {
      this.#leading = true;
      this.metrics.leader.set(1);
      this.#started = true;
      for (const controller of [this.controller, this.ledger]) {
        controller.start(this.#abort.signal).catch((err) => {
          if (!this.#abort.signal.aborted) this.#o.log.error({ err: String(err) }, 'controller failed to start');
        });
      }
    };
    if (!this.#elector) {
      lead();
      return;
    }
    this.#electing = this.#elector.run({
      onStartedLeading: lead,
      onStoppedLeading: () => {
        this.#leading = false;
        this.metrics.leader.set(0);
        // Another replica may lead now: stop reconciling at once, then let the owner decide (main.ts exits).
        void Promise.all([this.controller.stop(), this.ledger.stop()]).finally(() => this.#o.onLostLeadership?.());
      },
    });
  }

  async #listen(port: number, host: string): Promise<void> {
    this.#server = http.createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      } else if (path === '/readyz') {
        const ok = this.ready;
        res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok' : 'caches not synced');
      } else if (path === '/metrics') {
        this.metrics.registry.metrics().then(
          (text) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
          () => res.writeHead(500).end(),
        );
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      }
    });
    await new Promise<void>((resolve, reject) => {
      this.#server?.once('error', reject);
      this.#server?.listen(port, host, resolve);
    });
  }

  /** Graceful stop: no new work, in-flight reconciles finish, watches close, the Lease is released. */
  async stop(): Promise<void> {
    this.#abort.abort();
    if (this.#started) await Promise.all([this.controller.stop(), this.ledger.stop()]);
    await this.#elector?.stop();
    await this.#electing;
    this.#leading = false;
    this.metrics.leader.set(0);
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
    this.#server?.closeAllConnections();
  }
}
