import type { Logger } from 'pino';
import type { TranslationService } from '../../api/index.ts';
import { OperatorError } from '../../errors.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { Informer } from '../../kube/informer.ts';
import { RESOURCES, type ResourceType } from '../../kube/resources.ts';
import { controllerOf, type KubeObject, objectKey } from '../../kube/types.ts';
import { WorkQueue } from '../../kube/work-queue.ts';
import type { Metrics } from '../../metrics.ts';
import { MANAGED_SELECTOR } from '../../specs/translation-service/index.ts';
import { needsReconcile, ownerKey, referencedSecretNames } from './predicates.ts';
import { type ReconcileStats, reconcileTranslationService } from './reconcile.ts';

const OWNED: ResourceType[] = [
  RESOURCES.Deployment,
  RESOURCES.Service,
  RESOURCES.Job,
  RESOURCES.CronJob,
  RESOURCES.PodDisruptionBudget,
  RESOURCES.Ingress,
  RESOURCES.HorizontalPodAutoscaler,
];

export interface ControllerOptions {
  client: KubeClient;
  recorder: EventRecorder;
  log: Logger;
  metrics?: Metrics;
  /** Watch one namespace; all when undefined. */
  namespace?: string;
  concurrency?: number;
  /** Every TranslationService is reconciled again this often (a quiet resync makes no writes). */
  resyncMs?: number;
  token?: () => string;
}

/**
 * The TranslationService controller: informers on the custom resource, on every owned kind (mapped to the
 * owner, so a deleted or edited child is put back) and on Secret metadata (a Secret that appears recovers a
 * resource waiting for it), feeding one work queue.
 */
export class TranslationServiceController {
  static readonly NAME = 'translationservice';
  readonly stats: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
  readonly queue: WorkQueue;
  readonly #o: ControllerOptions;
  readonly #informers = new Map<string, Informer>();
  #workers: Promise<void> | undefined;

  constructor(options: ControllerOptions) {
    this.#o = options;
    const gauge = options.metrics?.queueDepth.labels(TranslationServiceController.NAME);
    this.queue = new WorkQueue({ onDepth: (d) => gauge?.set(d) });
    const common = {
      namespace: options.namespace,
      log: options.log,
    };
    const onError = (kind: string) => () => options.metrics?.watchRestarts.labels(kind).inc();
    const ts = new Informer(options.client, RESOURCES.TranslationService, {
      ...common,
      resyncMs: options.resyncMs,
      onError: onError('TranslationService'),
    });
    ts.on((type, obj, old) => {
      if (type === 'deleted') return;
      if (type === 'updated' && !needsReconcile(obj, old)) return;
      this.queue.add(objectKey(obj));
    });
    this.#informers.set(RESOURCES.TranslationService.kind, ts);
    for (const type of OWNED) {
      const informer = new Informer(options.client, type, {
        ...common,
        labelSelector: MANAGED_SELECTOR,
        onError: onError(type.kind),
      });
      informer.on((_event, obj) => {
        const key = ownerKey(obj);
        if (key) this.queue.add(key);
      });
      this.#informers.set(type.kind, informer);
    }
    const secrets = new Informer(options.client, RESOURCES.Secret, {
      ...common,
      metadataOnly: true,
      onError: onError('Secret'),
    });
    secrets.on((_event, obj) => {
      const owner = ownerKey(obj);
      if (owner) this.queue.add(owner);
      const namespace = obj.metadata.namespace ?? '';
      for (const candidate of ts.list(namespace)) {
        if (referencedSecretNames(candidate as TranslationService).has(obj.metadata.name ?? '')) {
          this.queue.add(objectKey(candidate));
        }
      }
    });
    this.#informers.set(RESOURCES.Secret.kind, secrets);
  }

  get synced(): boolean {
    return [...this.#informers.values()].every((i) => i.synced);
  }

  lookup = (type: ResourceType, namespace: string, name: string): KubeObject | undefined =>
    this.#informers.get(type.kind)?.get(namespace, name);

  /** Start the informers, wait until each has listed once, then run the workers. */
  async start(signal?: AbortSignal): Promise<void> {
    for (const informer of this.#informers.values()) informer.start();
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
    const { log, metrics } = this.#o;
    const name = TranslationServiceController.NAME;
    const deferred = new Set<string>();
    const deps = {
      client: this.#o.client,
      lookup: this.lookup,
      list: (type: ResourceType, namespace: string) => this.#informers.get(type.kind)?.list(namespace) ?? [],
      onWrite: (type: ResourceType, obj: KubeObject) => {
        // The metadata-only Secret cache never holds Secret data, not even our own writes.
        const stripped = type.kind === 'Secret' ? { apiVersion: 'v1', kind: 'Secret', metadata: obj.metadata } : obj;
        this.#informers.get(type.kind)?.upsert(stripped);
      },
      recorder: this.#o.recorder,
      log,
      stats: this.stats,
      token: this.#o.token,
      // Fold status writes: when the key is queued again already, its next reconcile writes the newer status.
      // Never twice in a row, so a steady stream of child events cannot hold a status back.
      deferStatus: (key: string) => {
        if (this.queue.pending(key) && !deferred.has(key)) {
          if (deferred.size > 10_000) deferred.clear(); // keys of deleted resources
          deferred.add(key);
          return true;
        }
        deferred.delete(key);
        return false;
      },
    };
    log.info({ controller: name }, 'caches synced; workers start');
    this.#workers = this.queue.run(
      this.#o.concurrency ?? 4,
      async (key) => {
        const end = metrics?.reconcileDuration.labels(name).startTimer();
        const call: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
        try {
          const result = await reconcileTranslationService({ ...deps, stats: call }, key);
          metrics?.reconcileTotal.labels(name, result?.requeueAfterMs !== undefined ? 'requeue' : 'success').inc();
          return result;
        } finally {
          this.stats.writes += call.writes;
          this.stats.statusWrites += call.statusWrites;
          this.stats.reconciles += call.reconciles;
          if (call.writes) metrics?.writes.labels(name, 'children', 'write').inc(call.writes);
          if (call.statusWrites) metrics?.writes.labels(name, 'TranslationService', 'status').inc(call.statusWrites);
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

  /** Stop taking work, wait for in-flight reconciles, stop the watches. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.#workers;
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }

  /** The controller's view of one owned kind (tests). */
  informer(kind: string): Informer | undefined {
    return this.#informers.get(kind);
  }

  /** True when `obj` is controlled by a TranslationService (tests). */
  static ownedByTranslationService(obj: KubeObject): boolean {
    return controllerOf(obj)?.kind === 'TranslationService';
  }
}
