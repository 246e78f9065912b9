// What every controller shares: its informer caches, the workers that drain its queue into a reconcile function,
// and the controller itself, built from a declaration (`ControllerDefinition`): the custom resource, the objects
// it watches and how they map to keys, and the reconcile function. Each kind's controller is such a declaration.
import type { Logger } from 'pino';
import { RECONCILE_ANNOTATION, ROTATE_KEY_ANNOTATION } from '../api/index.ts';
import { OperatorError } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import type { EventRecorder } from '../kube/events.ts';
import { Informer } from '../kube/informer.ts';
import type { ResourceType } from '../kube/resources.ts';
import { type KubeObject, objectKey } from '../kube/types.ts';
import { WorkQueue } from '../kube/work-queue.ts';
import type { Metrics } from '../metrics.ts';
import type { ReconcileResult, ReconcilerDeps, ReconcileStats } from './reconcile-frame.ts';

/** One controller's caches: an informer per kind. */
export class InformerCache {
  readonly #informers = new Map<string, Informer>();

  set(kind: string, informer: Informer): void {
    this.#informers.set(kind, informer);
  }

  informer(kind: string): Informer | undefined {
    return this.#informers.get(kind);
  }

  get synced(): boolean {
    return [...this.#informers.values()].every((i) => i.synced);
  }

  lookup = (type: ResourceType, namespace: string, name: string): KubeObject | undefined =>
    this.#informers.get(type.kind)?.get(namespace, name);

  list = (type: ResourceType, namespace: string): KubeObject[] => this.#informers.get(type.kind)?.list(namespace) ?? [];

  /** Puts an object the controller just wrote into its cache, so the next reconcile does not wait for the watch. */
  remember = (type: ResourceType, obj: KubeObject): void => {
    // The metadata-only Secret cache never holds Secret data, not even our own writes.
    const stored = type.kind === 'Secret' ? { apiVersion: 'v1', kind: 'Secret', metadata: obj.metadata } : obj;
    this.#informers.get(type.kind)?.upsert(stored);
  };

  /** Starts every informer and resolves once each has listed once. */
  async start(signal?: AbortSignal): Promise<void> {
    for (const informer of this.#informers.values()) informer.start();
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }
}

export interface WorkerOptions {
  queue: WorkQueue;
  /** Controller name, the `controller` label of the metrics. */
  name: string;
  /** Kind of the custom resource, the label of its status writes. */
  kind: string;
  concurrency: number;
  metrics?: Metrics;
  log: Logger;
  /** Totals over every reconcile of this controller. */
  stats: ReconcileStats;
  reconcile(key: string, stats: ReconcileStats): Promise<ReconcileResult>;
}

/** Runs the workers until the queue shuts down: metrics and stats per reconcile, a log line per failure. */
export function runReconcileWorkers(o: WorkerOptions): Promise<void> {
  const { metrics, name } = o;
  return o.queue.run(
    o.concurrency,
    async (key) => {
      const end = metrics?.reconcileDuration.labels(name).startTimer();
      const call: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
      try {
        const result = await o.reconcile(key, call);
        metrics?.reconcileTotal.labels(name, result?.requeueAfterMs !== undefined ? 'requeue' : 'success').inc();
        return result;
      } finally {
        o.stats.writes += call.writes;
        o.stats.statusWrites += call.statusWrites;
        o.stats.reconciles += call.reconciles;
        if (call.writes) metrics?.writes.labels(name, 'children', 'write').inc(call.writes);
        if (call.statusWrites) metrics?.writes.labels(name, o.kind, 'status').inc(call.statusWrites);
        end?.();
      }
    },
    (key, err, retryInMs) => {
      const code = err instanceof OperatorError ? err.code : 'UNEXPECTED';
      metrics?.reconcileTotal.labels(name, 'error').inc();
      metrics?.reconcileErrors.labels(name, code).inc();
      const level = err instanceof OperatorError ? 'warn' : 'error';
      o.log[level]({ key, code, err: err instanceof Error ? err.message : String(err), retryInMs }, 'reconcile failed');
    },
  );
}

/** Whether an update of a custom resource needs a reconcile: not for the operator's own status writes. */
/** Annotations that ask the operator for something (pause, a key rotation): a change is worth a reconcile. */
const ACTION_ANNOTATIONS = [RECONCILE_ANNOTATION, ROTATE_KEY_ANNOTATION];

export function needsReconcile(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    a.uid !== b.uid ||
    ACTION_ANNOTATIONS.some((k) => a.annotations?.[k] !== b.annotations?.[k])
  );
}

/** One watched kind besides the custom resource: which objects feed the queue, and under which keys. */
export interface WatchDefinition {
  type: ResourceType;
  /** Only the operator's own children (the definition's label selector); false watches every object. Default true. */
  owned?: boolean;
  /** Cache metadata only (Secrets: their data never enters the cache). */
  metadataOnly?: boolean;
  /** Whether an update matters (default: every event does). */
  changed?: (obj: KubeObject, old: KubeObject | undefined) => boolean;
  /** Keys to reconcile for an event on `obj` (default: the definition's `ownerKey`). */
  keys?: (obj: KubeObject, cache: InformerCache) => Iterable<string>;
}

/** A controller, declared: what it reconciles, what it watches, and the reconcile function. */
export interface ControllerDefinition<Deps extends ReconcilerDeps> {
  /** Controller name: the `controller` label of the metrics and the log. */
  name: string;
  /** The custom resource; its spec, deletion, finalizer and label changes trigger a reconcile. */
  resource: ResourceType;
  /** Label selector of the operator's children of this kind. */
  selector: string;
  /** `namespace/name` of the custom resource `obj` belongs to, if any. */
  ownerKey(obj: KubeObject): string | undefined;
  watches: WatchDefinition[];
  /** Prefix of the `kind` label of the watch-restart metric for the watches (not for the custom resource). */
  watchLabelPrefix?: string;
  reconcile(deps: Deps, key: string): Promise<ReconcileResult>;
}

/** What every controller is started with. */
export interface ControllerOptions {
  client: KubeClient;
  recorder: EventRecorder;
  log: Logger;
  metrics?: Metrics;
  /** Watch one namespace; all when undefined. */
  namespace?: string;
  concurrency?: number;
  /** Every custom resource is reconciled again this often (a quiet resync makes no writes). */
  resyncMs?: number;
}

/**
 * A controller run from its definition: an informer on the custom resource and one per watch, feeding one work
 * queue; once every cache has synced, workers run the reconcile with the shared deps plus the kind's own.
 */
export class Controller<Deps extends ReconcilerDeps> {
  readonly stats: ReconcileStats = { writes: 0, statusWrites: 0, reconciles: 0 };
  readonly queue: WorkQueue;
  readonly #def: ControllerDefinition<Deps>;
  readonly #o: ControllerOptions;
  readonly #kindDeps: Omit<Deps, keyof ReconcilerDeps>;
  readonly #cache = new InformerCache();
  #workers: Promise<void> | undefined;

  constructor(def: ControllerDefinition<Deps>, options: ControllerOptions, kindDeps: Omit<Deps, keyof ReconcilerDeps>) {
    this.#def = def;
    this.#o = options;
    this.#kindDeps = kindDeps;
    const gauge = options.metrics?.queueDepth.labels(def.name);
    this.queue = new WorkQueue({ onDepth: (d) => gauge?.set(d) });
    const onError = (label: string) => () => options.metrics?.watchRestarts.labels(label).inc();
    const resource = new Informer(options.client, def.resource, {
      namespace: options.namespace,
      log: options.log,
      resyncMs: options.resyncMs,
      onError: onError(def.resource.kind),
    });
    resource.on((event, obj, old) => {
      if (event === 'deleted') return;
      if (event === 'updated' && !needsReconcile(obj, old)) return;
      this.queue.add(objectKey(obj));
    });
    this.#cache.set(def.resource.kind, resource);
    for (const watch of def.watches) {
      const informer = new Informer(options.client, watch.type, {
        namespace: options.namespace,
        log: options.log,
        labelSelector: watch.owned === false ? undefined : def.selector,
        metadataOnly: watch.metadataOnly,
        onError: onError(`${def.watchLabelPrefix ?? ''}${watch.type.kind}`),
      });
      informer.on((event, obj, old) => {
        if (event === 'updated' && watch.changed && !watch.changed(obj, old)) return;
        if (!watch.keys) {
          const key = def.ownerKey(obj);
          if (key) this.queue.add(key);
          return;
        }
        for (const key of watch.keys(obj, this.#cache)) this.queue.add(key);
      });
      this.#cache.set(watch.type.kind, informer);
    }
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
      metrics: this.#o.metrics,
      deferStatus: statusDeferral(this.queue),
      ...this.#kindDeps,
    } as Omit<Deps, 'stats'>;
    log.info({ controller: this.#def.name }, 'caches synced; workers start');
    this.#workers = runReconcileWorkers({
      queue: this.queue,
      name: this.#def.name,
      kind: this.#def.resource.kind,
      concurrency: this.#o.concurrency ?? 4,
      metrics: this.#o.metrics,
      log,
      stats: this.stats,
      reconcile: (key, stats) => this.#def.reconcile({ ...deps, stats } as Deps, key),
    });
  }

  /** Stop taking work, wait for in-flight reconciles, stop the watches. */
  async stop(): Promise<void> {
    this.queue.shutDown();
    await this.#workers;
    await this.#cache.stop();
  }

  /** The controller's view of one watched kind (tests). */
  informer(kind: string): Informer | undefined {
    return this.#cache.informer(kind);
  }
}

/**
 * Folds status writes: true when `key` is queued again already, so its next reconcile writes the newer status.
 * Never twice in a row for a key, so a steady stream of child events cannot hold a status back.
 */
function statusDeferral(queue: WorkQueue): (key: string) => boolean {
  const deferred = new Set<string>();
  return (key) => {
    if (queue.pending(key) && !deferred.has(key)) {
      if (deferred.size > 10_000) deferred.clear(); // keys of deleted resources
      deferred.add(key);
      return true;
    }
    deferred.delete(key);
    return false;
  };
}
