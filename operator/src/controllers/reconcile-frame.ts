// The frame every reconcile runs in, whatever its kind: read the resource from the cache, finalize it when it is
// being deleted, add the finalizer otherwise, reconcile the spec, then count the writes and flush the Events.
import type { Logger } from 'pino';
import { isNotFound } from '../errors.ts';
import type { ApplyContext } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventBatch, type EventRecorder } from '../kube/events.ts';
import { type ResourceType, resourcePath } from '../kube/resources.ts';
import { type KubeObject, splitKey } from '../kube/types.ts';
import { type Status, updateStatus } from '../status/status-writer.ts';
import type { ReconcileResult, ReconcileStats } from './controller-runtime.ts';

/** Keeps a custom resource alive until the operator has stopped its workloads. */
export const FINALIZER = 'scriptorium.dev/cleanup';

export interface FrameDeps {
  client: KubeClient;
  lookup: (type: ResourceType, namespace: string, name: string) => KubeObject | undefined;
  onWrite: (type: ResourceType, obj: KubeObject) => void;
  recorder: EventRecorder;
  stats: ReconcileStats;
}

/** What every reconciler reads and writes through (both kinds' deps extend it). */
export interface ReconcilerDeps extends FrameDeps {
  list: (type: ResourceType, namespace: string) => KubeObject[];
  log: Logger;
}

export interface KindReconciler {
  type: ResourceType;
  /** Stops what must stop before the garbage collector deletes the rest (the finalizer goes after it). */
  cleanUp(obj: KubeObject, ctx: ApplyContext): Promise<void>;
  /** Note of the `Finalized` Event. */
  finalizedNote: string;
  reconcileSpec(obj: KubeObject, ctx: ApplyContext): Promise<ReconcileResult>;
}

export async function reconcileInFrame(deps: FrameDeps, key: string, kind: KindReconciler): Promise<ReconcileResult> {
  const { namespace, name } = splitKey(key);
  let obj = deps.lookup(kind.type, namespace, name);
  if (!obj) return undefined;
  deps.stats.reconciles++;
  const writes = { count: 0 };
  const ctx: ApplyContext = {
    client: deps.client,
    owner: obj,
    lookup: deps.lookup,
    onWrite: deps.onWrite,
    recorder: deps.recorder,
    events: new EventBatch(),
    writes,
  };
  try {
    if (obj.metadata.deletionTimestamp) {
      await finalize(deps, kind, obj, ctx);
      return undefined;
    }
    if (!obj.metadata.finalizers?.includes(FINALIZER)) {
      obj = await patchFinalizers(deps, kind.type, obj, [...(obj.metadata.finalizers ?? []), FINALIZER]);
      ctx.owner = obj;
    }
    return await kind.reconcileSpec(obj, ctx);
  } finally {
    deps.stats.writes += writes.count;
    await ctx.events?.flush(deps.recorder, ctx.owner);
  }
}

async function finalize(deps: FrameDeps, kind: KindReconciler, obj: KubeObject, ctx: ApplyContext): Promise<void> {
  if (!obj.metadata.finalizers?.includes(FINALIZER)) return;
  await kind.cleanUp(obj, ctx);
  try {
    await patchFinalizers(
      deps,
      kind.type,
      obj,
      obj.metadata.finalizers.filter((f) => f !== FINALIZER),
    );
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  await deps.recorder.record(obj, { type: 'Normal', reason: 'Finalized', action: 'Delete', note: kind.finalizedNote });
}

/** Sets the finalizers with a merge patch guarded by the resourceVersion the decision was made on. */
async function patchFinalizers(
  deps: FrameDeps,
  type: ResourceType,
  obj: KubeObject,
  finalizers: string[],
): Promise<KubeObject> {
  const updated = await deps.client.request<KubeObject>(
    'PATCH',
    resourcePath(type, obj.metadata.namespace, obj.metadata.name),
    {
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: obj.metadata.resourceVersion, finalizers } },
    },
  );
  deps.stats.writes++;
  return { ...updated, apiVersion: obj.apiVersion, kind: obj.kind };
}

/** Writes the resource's status (a fresh read, `mutate`, skipped when unchanged) and keeps the cache level with it. */
export async function writeStatus(
  deps: FrameDeps,
  type: ResourceType,
  obj: KubeObject,
  mutate: (s: Status) => Status,
): Promise<void> {
  const { written, object } = await updateStatus(
    deps.client,
    type,
    obj.metadata.namespace ?? '',
    obj.metadata.name ?? '',
    mutate,
    { cached: obj },
  );
  if (written && object) {
    deps.stats.statusWrites++;
    // The watch event of a status-only change triggers no reconcile, so the cache learns it here.
    deps.onWrite(type, { ...object, apiVersion: obj.apiVersion, kind: obj.kind });
  }
}
