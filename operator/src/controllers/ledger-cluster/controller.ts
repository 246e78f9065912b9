import type { Logger } from 'pino';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { OperatorError } from '../../errors.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { Informer } from '../../kube/informer.ts';
import { RESOURCES, type ResourceType } from '../../kube/resources.ts';
import { type KubeObject, objectKey } from '../../kube/types.ts';
import { WorkQueue } from '../../kube/work-queue.ts';
import type { Metrics } from '../../metrics.ts';
import { MANAGED_SELECTOR } from '../../specs/ledger-cluster/index.ts';
import type { NodeApi } from './observe.ts';
import { ledgerNeedsReconcile, ledgerOwnerKey, podChanged } from './predicates.ts';
import { type ReconcileStats, reconcileLedgerCluster } from './reconcile.ts';
import { STATEFUL_SET } from './resources.ts';

export interface LedgerControllerOptions {
  client: KubeClient;
  recorder: EventRecorder;
  log: Logger;
  metrics?: Metrics;
  namespace?: string;
  concurrency?: number;
  resyncMs?: number;
  /** Node API client factory (H2b's LedgerNodeClient in production). */
  nodeApi: (opts: { token?: string; caPem?: string }) => NodeApi;
  /** Base URL of a validator (default: its Service DNS name; tests point it at loopback). */
  nodeUrl?: (lc: LedgerCluster, spec: LedgerClusterSpec, validator: string) => string;
  /** Clock (tests). */
  now?: () => Date;
}

/**
 * The LedgerCluster controller: informers on the custom resource and on everything it owns (StatefulSets,
 * Services, ConfigMaps, Secret metadata, and the validator pods, so a pod's readiness re-triggers), one queue.
 */
export class LedgerClusterController {
  static readonly NAME = 'ledgercluster';
  readonly stats: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
  readonly queue: WorkQueue;
  readonly #o: LedgerControllerOptions;
  readonly #informers = new Map<string, Informer>();
  #workers: Promise<void> | undefined;

  constructor(options: LedgerControllerOptions) {
    this.#o = options;
    const gauge = options.metrics?.queueDepth.labels(LedgerClusterController.NAME);
    this.queue = new WorkQueue({ onDepth: (d) => gauge?.set(d) });
    const common = { namespace: options.namespace, log: options.log };
    const onError = (kind: string) => () => options.metrics?.watchRestarts.labels(kind).inc();
    const lc = new Informer(options.client, RESOURCES.LedgerCluster, {
      ...common,
      resyncMs: options.resyncMs,
      onError: onError('LedgerCluster'),
    });
    lc.on((type, obj, old) => {
      if (type === 'deleted') return;
      if (type === 'updated' && !ledgerNeedsReconcile(obj, old)) return;
      this.queue.add(objectKey(obj));
    });
    this.#informers.set(RESOURCES.LedgerCluster.kind, lc);
    const owned: Array<[ResourceType, boolean]> = [
      [STATEFUL_SET, false],
      [RESOURCES.Service, false],
      [RESOURCES.ConfigMap, false],
      [RESOURCES.PodDisruptionBudget, false],
      // Metadata only: Secret data (keys, the CA key, the token) never enters the cache.
      [RESOURCES.Secret, true],
    ];
    for (const [type, metadataOnly] of owned) {
      const informer = new Informer(options.client, type, {
        ...common,
        labelSelector: MANAGED_SELECTOR,
        metadataOnly,
        onError: onError(`ledger-${type.kind}`),
      });
      informer.on((_event, obj) => {
        const key = ledgerOwnerKey(obj);
        if (key) this.queue.add(key);
      });
      this.#informers.set(type.kind, informer);
    }
    const pods = new Informer(options.client, RESOURCES.Pod, {
      ...common,
      labelSelector: MANAGED_SELECTOR,
      onError: onError('ledger-Pod'),
    });
    pods.on((event, obj, old) => {
      if (event === 'updated' && !podChanged(obj, old)) return;
      const key = ledgerOwnerKey(obj);
      if (key) this.queue.add(key);
    });
    this.#informers.set(RESOURCES.Pod.kind, pods);
  }

  get synced(): boolean {
    return [...this.#informers.values()].every((i) => i.synced);
  }

  lookup = (type: ResourceType, namespace: string, name: string): KubeObject | undefined =>
    this.#informers.get(type.kind)?.get(namespace, name);

  async start(signal?: AbortSignal): Promise<void> {
    for (const informer of this.#informers.values()) informer.start();
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
    const { log, metrics } = this.#o;
    const name = LedgerClusterController.NAME;
    const deps = {
      client: this.#o.client,
      lookup: this.lookup,
      list: (type: ResourceType, namespace: string) => this.#informers.get(type.kind)?.list(namespace) ?? [],
      onWrite: (type: ResourceType, obj: KubeObject) => {
        const stripped = type.kind === 'Secret' ? { apiVersion: 'v1', kind: 'Secret', metadata: obj.metadata } : obj;
        this.#informers.get(type.kind)?.upsert(stripped);
      },
      recorder: this.#o.recorder,
      log,
      stats: this.stats,
      nodeApi: this.#o.nodeApi,
      nodeUrl: this.#o.nodeUrl,
      ...(this.#o.now ? { now: this.#o.now } : {}),
    };
    log.info({ controller: name }, 'caches synced; workers start');
    this.#workers = this.queue.run(
      this.#o.concurrency ?? 4,
      async (key) => {
        const end = metrics?.reconcileDuration.labels(name).startTimer();
        const call: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
        try {
          const result = await reconcileLedgerCluster({ ...deps, stats: call }, key);
          metrics?.reconcileTotal.labels(name, result?.requeueAfterMs !== undefined ? 'requeue' : 'success').inc();
          return result;
        } finally {
          this.stats.writes += call.writes;
          this.stats.statusWrites += call.statusWrites;
          this.stats.reconciles += call.reconciles;
          if (call.writes) metrics?.writes.labels(name, 'children', 'write').inc(call.writes);
          if (call.statusWrites) metrics?.writes.labels(name, 'LedgerCluster', 'status').inc(call.statusWrites);
          end?.();
        }
      },
      (key, err, retryInMs) => {
        const code = err instanceof OperatorError ? err.code : 'UNEXPECTED';
        metrics?.reconcileTotal.labels(name, 'error').inc();
        metrics?.reconcileErrors.labels(name, code).inc();
        const level = err instanceof OperatorError ? 'warn' : 'error';
        log[level]({ key, code, err: err instanceof Error ? err.message : String(err), retryInMs }, 'reconcile failed');
      },
    );
  }

  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.#workers;
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }

  informer(kind: string): Informer | undefined {
    return this.#informers.get(kind);
  }
}
