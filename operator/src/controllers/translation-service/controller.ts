import type { Logger } from 'pino';
import type { TranslationService } from '../../api/index.ts';
import type { KubeClient } from '../../kube/client.ts';
import type { EventRecorder } from '../../kube/events.ts';
import { Informer } from '../../kube/informer.ts';
import { RESOURCES, type ResourceType } from '../../kube/resources.ts';
import { controllerOf, type KubeObject, objectKey } from '../../kube/types.ts';
import { WorkQueue } from '../../kube/work-queue.ts';
import type { Metrics } from '../../metrics.ts';
import { MANAGED_SELECTOR } from '../../specs/translation-service/index.ts';
import { InformerCache, type ReconcileStats, runReconcileWorkers } from '../controller-runtime.ts';
import { needsReconcile, ownerKey, referencedSecretNames } from './predicates.ts';
import { reconcileTranslationService } from './reconcile.ts';

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
  readonly #cache = new InformerCache();
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
    this.#cache.set(RESOURCES.TranslationService.kind, ts);
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
      this.#cache.set(type.kind, informer);
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
    this.#cache.set(RESOURCES.Secret.kind, secrets);
  }

  get synced(): boolean {
    return this.#cache.synced;
  }

  lookup = this.#cache.lookup;

  /** Start the informers, wait until each has listed once, then run the workers. */
  async start(signal?: AbortSignal): Promise<void> {
    await this.#cache.start(signal);
    const { log } = this.#o;
    const deferred = new Set<string>();
    const deps = {
      client: this.#o.client,
      lookup: this.#cache.lookup,
      list: this.#cache.list,
      onWrite: this.#cache.remember,
      recorder: this.#o.recorder,
      log,
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
    log.info({ controller: TranslationServiceController.NAME }, 'caches synced; workers start');
    this.#workers = runReconcileWorkers({
      queue: this.queue,
      name: TranslationServiceController.NAME,
      kind: 'TranslationService',
      concurrency: this.#o.concurrency ?? 4,
      metrics: this.#o.metrics,
      log,
      stats: this.stats,
      reconcile: (key, stats) => reconcileTranslationService({ ...deps, stats }, key),
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

  /** True when `obj` is controlled by a TranslationService (tests). */
  static ownedByTranslationService(obj: KubeObject): boolean {
    return controllerOf(obj)?.kind === 'TranslationService';
  }
}
