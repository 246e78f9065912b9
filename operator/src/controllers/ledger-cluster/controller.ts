import type { Logger } from 'pino';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { Informer } from '../../kube/informer.ts';
import { RESOURCES, type ResourceType } from '../../kube/resources.ts';
import { objectKey } from '../../kube/types.ts';
import { WorkQueue } from '../../kube/work-queue.ts';
import type { Metrics } from '../../metrics.ts';
import { MANAGED_SELECTOR } from '../../specs/ledger-cluster/index.ts';
import { InformerCache, type ReconcileStats, runReconcileWorkers } from '../controller-runtime.ts';
import type { NodeApi } from './observe.ts';
import { ledgerNeedsReconcile, ledgerOwnerKey, podChanged } from './predicates.ts';
import { reconcileLedgerCluster } from './reconcile.ts';
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
  readonly #cache = new InformerCache();
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
    this.#cache.set(RESOURCES.LedgerCluster.kind, lc);
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
      this.#cache.set(type.kind, informer);
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
    this.#cache.set(RESOURCES.Pod.kind, pods);
  }

  get synced(): boolean {
    return this.#cache.synced;
  }

  lookup = this.#cache.lookup;

  /** Start the informers, wait until each has listed once, then run the workers. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.#cache.start(signal);
    const { log } = this.#o;
    const deps = {
      client: this.#o.client,
      lookup: this.#cache.lookup,
      list: this.#cache.list,
      onWrite: this.#cache.remember,
      recorder: this.#o.recorder,
      log,
      nodeApi: this.#o.nodeApi,
      nodeUrl: this.#o.nodeUrl,
      ...(this.#o.now ? { now: this.#o.now } : {}),
    };
    log.info({ controller: LedgerClusterController.NAME }, 'caches synced; workers start');
    this.#workers = runReconcileWorkers({
      queue: this.queue,
      name: LedgerClusterController.NAME,
      kind: 'LedgerCluster',
      concurrency: this.#o.concurrency ?? 4,
      metrics: this.#o.metrics,
      log,
      stats: this.stats,
      reconcile: (key, stats) => reconcileLedgerCluster({ ...deps, stats }, key),
    });
  }

  /** Stop taking work, wait for in-flight reconciles, stop the watches. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.#workers;
    await this.#cache.stop();
  }

  /** The controller's view of one owned kind (tests). */
  informer(kind: string): Informer | undefined {
    return this.#cache.informer(kind);
  }
}
