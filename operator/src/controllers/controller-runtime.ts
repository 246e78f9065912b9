// What every controller shares: its informer caches and the workers that drain its queue into a reconcile function.
// Each controller (one per kind) decides which informers feed which keys; this module runs them.
import type { Logger } from 'pino';
import { OperatorError } from '../errors.ts';
import type { Informer } from '../kube/informer.ts';
import type { ResourceType } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import type { WorkQueue } from '../kube/work-queue.ts';
import type { Metrics } from '../metrics.ts';

/** Writes made by reconciles (metrics and the benchmarks). */
export interface ReconcileStats {
  writes: number;
  statusWrites: number;
  reconciles: number;
}

export type ReconcileResult = { requeueAfterMs?: number } | undefined;

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
export function needsReconcile(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    a.uid !== b.uid
  );
}
