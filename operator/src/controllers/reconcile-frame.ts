// The frame every reconcile runs in, whatever its kind: read the resource from the cache, finalize it when it is
// being deleted, add the finalizer otherwise, refuse an invalid spec, reconcile the spec, report a failure as
// conditions and a Warning Event, then count the writes and flush the Events. The conditions of every status write
// (Degraded, Progressing; Ready derived by the status writer) are set here too.
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import { isPaused, RECONCILE_ANNOTATION } from '../api/index.ts';
import {
  isConflict,
  isNotFound,
  KubeApiError,
  NotOwnedError,
  OperatorError,
  SecretNotFoundError,
  SpecRefusedError,
} from '../errors.ts';
import type { ApplyContext } from '../kube/apply.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventBatch, type EventRecorder } from '../kube/events.ts';
import { type ResourceType, resourcePath } from '../kube/resources.ts';
import { type KubeObject, objectKey, splitKey } from '../kube/types.ts';
import type { Metrics } from '../metrics.ts';
import { type ConditionInput, setCondition } from '../status/conditions.ts';
import { type Status, updateStatus } from '../status/status-writer.ts';

/** Writes made by reconciles (metrics and the benchmarks). */
export interface ReconcileStats {
  writes: number;
  statusWrites: number;
  reconciles: number;
}

export type ReconcileResult = { requeueAfterMs?: number } | undefined;

/** Keeps a custom resource alive until the operator has stopped its workloads. */
export const FINALIZER = 'scriptorium.dev/cleanup';

export interface FrameDeps {
  client: KubeClient;
  log: Logger;
  lookup: (type: ResourceType, namespace: string, name: string) => KubeObject | undefined;
  onWrite: (type: ResourceType, obj: KubeObject) => void;
  recorder: EventRecorder;
  stats: ReconcileStats;
}

/** What every reconciler reads and writes through (both kinds' deps extend it). */
export interface ReconcilerDeps extends FrameDeps {
  list: (type: ResourceType, namespace: string) => KubeObject[];
  /** The operator's metrics (a reconciler's own gauges). */
  metrics?: Metrics;
  /**
   * True when the final status write of this reconcile may be left to the next reconcile of `key`, which is
   * already queued (a newer view of the children is on its way). The controller allows it once in a row per key.
   */
  deferStatus?: (key: string) => boolean;
}

/** One condition as a reconcile decides it (`lastTransitionTime` and `observedGeneration` are the writer's). */
export type Cond = { status: 'True' | 'False'; reason: string; message: string };

/** What one status write of a reconcile says: `Degraded`, `Progressing` (Ready is derived) and the kind's fields. */
export interface ConditionsReport {
  degraded: Cond;
  progressing: Cond;
  /** Further conditions of the kind (a diagnosis such as `RoundChangeStorm`). */
  others?: ConditionInput[];
  /** Conditions that no longer apply (e.g. `Witnessed` once no witness is configured): removed. */
  drop?: string[];
  /** Status fields written along; an undefined value removes the field. */
  fields?: Partial<Status>;
}

/** How a kind plugs into the frame: its resource, its spec schema, its clean-up and its spec steps. */
export interface KindReconciler<Spec> {
  type: ResourceType;
  /** The spec's zod schema: a spec it refuses is reported (Degraded `InvalidSpec`, a Warning Event), not retried. */
  schema: ZodType<Spec, unknown>;
  /** Status fields that follow from the spec alone (a URL, a selector), written with every failure report too. */
  specFields?(obj: KubeObject, spec: Spec): Partial<Status>;
  /** Stops what must stop before the garbage collector deletes the rest (the finalizer goes after it). */
  cleanUp(obj: KubeObject, ctx: ApplyContext): Promise<void>;
  /** Note of the `Finalized` Event. */
  finalizedNote: string;
  reconcileSpec(obj: KubeObject, spec: Spec, ctx: ApplyContext): Promise<ReconcileResult>;
}

export async function reconcileInFrame<Spec>(
  deps: FrameDeps,
  key: string,
  kind: KindReconciler<Spec>,
): Promise<ReconcileResult> {
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
    if (isPaused(obj.metadata)) {
      await reportPaused(deps, kind.type, obj);
      return undefined; // nothing until the annotation changes (an annotation change triggers a reconcile)
    }
    if (obj.status?.paused) await reportResumed(deps, kind.type, obj);
    if (!obj.metadata.finalizers?.includes(FINALIZER)) {
      obj = await patchFinalizers(deps, kind.type, obj, [...(obj.metadata.finalizers ?? []), FINALIZER]);
      ctx.owner = obj;
    }
    const parsed = kind.schema.safeParse(obj.spec);
    if (!parsed.success) {
      const message = `invalid spec: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
      await reportFailure(deps, kind.type, obj, new SpecRefusedError('InvalidSpec', message), {});
      return undefined; // nothing to retry until the spec changes
    }
    const spec = parsed.data;
    try {
      return await kind.reconcileSpec(obj, spec, ctx);
    } catch (err) {
      await reportFailure(deps, kind.type, ctx.owner, err, kind.specFields?.(ctx.owner, spec) ?? {});
      if (err instanceof SpecRefusedError) return undefined;
      throw err;
    }
  } finally {
    deps.stats.writes += writes.count;
    await ctx.events?.flush(deps.recorder, ctx.owner);
  }
}

const PAUSED_MESSAGE = `${RECONCILE_ANNOTATION}: paused: the operator changes nothing it owns until the annotation is removed`;

/** Paused: the status says so (`Paused=True`, `paused: true`), an Event records it, and nothing else is written. */
async function reportPaused(deps: FrameDeps, type: ResourceType, obj: KubeObject): Promise<void> {
  const generation = obj.metadata.generation;
  await writeStatus(deps, type, obj, (status) => ({
    ...status,
    paused: true,
    conditions: setCondition(
      status.conditions,
      { type: 'Paused', status: 'True', reason: 'ReconcilePaused', message: PAUSED_MESSAGE },
      generation,
    ),
  }));
  await deps.recorder.record(obj, { type: 'Normal', reason: 'Paused', action: 'Reconcile', note: PAUSED_MESSAGE });
}

/** The annotation is gone: `Paused=False`, and the reconcile goes on as usual. */
async function reportResumed(deps: FrameDeps, type: ResourceType, obj: KubeObject): Promise<void> {
  const generation = obj.metadata.generation;
  await writeStatus(deps, type, obj, (status) => {
    const { paused: _paused, ...rest } = status;
    return {
      ...rest,
      conditions: setCondition(
        status.conditions,
        { type: 'Paused', status: 'False', reason: 'Reconciling', message: `${RECONCILE_ANNOTATION} is not paused` },
        generation,
      ),
    };
  });
  await deps.recorder.record(obj, {
    type: 'Normal',
    reason: 'Resumed',
    action: 'Reconcile',
    note: `${RECONCILE_ANNOTATION} removed: reconciling again`,
  });
}

/** The report of a failed reconcile: reason, messages and whether a Warning Event is recorded (its action). */
function failureOf(
  err: unknown,
): { reason: string; message: string; progressing?: string; action?: string } | undefined {
  if (err instanceof SpecRefusedError) return { reason: err.reason, message: err.message, action: 'Refuse' };
  if (err instanceof NotOwnedError) return { reason: 'ResourceConflict', message: err.message };
  if (isConflict(err)) return undefined; // a stale cache: the retry reads again
  if (err instanceof KubeApiError) {
    // Refused or failing writes (400/422, quota, a full Service IP range, …) are reported, then retried with backoff.
    const message = err.message.slice(0, 1000);
    return {
      reason: 'ApplyFailed',
      message,
      progressing: 'An object was refused by the API server',
      action: 'Reconcile',
    };
  }
  if (err instanceof SecretNotFoundError) {
    const message = err.field ? `${err.field}: ${err.message}` : err.message;
    return { reason: 'SecretNotFound', message, progressing: 'Waiting for the referenced Secret', action: 'Reconcile' };
  }
  if (err instanceof OperatorError) return { reason: 'ReconcileFailed', message: err.message, action: 'Reconcile' };
  return undefined; // unexpected: logged by the workers, retried with backoff
}

/** Reports a failure on the resource: `Degraded=True` and `Progressing=False` with its reason, and a Warning Event. */
async function reportFailure(
  deps: FrameDeps,
  type: ResourceType,
  obj: KubeObject,
  err: unknown,
  fields: Partial<Status>,
): Promise<void> {
  const failure = failureOf(err);
  if (!failure) {
    if (isConflict(err)) deps.log.debug({ key: objectKey(obj) }, 'conflict; retrying');
    return;
  }
  const { reason, message, action } = failure;
  await writeConditions(deps, type, obj, {
    degraded: { status: 'True', reason, message },
    progressing: { status: 'False', reason, message: failure.progressing ?? message },
    fields,
  });
  if (action) await deps.recorder.record(obj, { type: 'Warning', reason, action, note: message });
}

async function finalize<Spec>(
  deps: FrameDeps,
  kind: KindReconciler<Spec>,
  obj: KubeObject,
  ctx: ApplyContext,
): Promise<void> {
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

/**
 * Writes the resource's status (`mutate` on the cached copy, skipped when unchanged; a fresh read only after a
 * conflict) and keeps the cache level with it.
 */
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

/** Writes one reconcile's conditions and fields (see `ConditionsReport`); `observedGeneration` is the object's. */
export function writeConditions(
  deps: FrameDeps,
  type: ResourceType,
  obj: KubeObject,
  report: ConditionsReport,
): Promise<void> {
  const generation = obj.metadata.generation;
  return writeStatus(deps, type, obj, (status) => {
    let conditions = setCondition(status.conditions, { type: 'Degraded', ...report.degraded }, generation);
    conditions = setCondition(conditions, { type: 'Progressing', ...report.progressing }, generation);
    for (const other of report.others ?? []) conditions = setCondition(conditions, other, generation);
    if (report.drop) conditions = conditions.filter((c) => !report.drop?.includes(c.type));
    const next: Status = { ...status, ...report.fields, observedGeneration: generation, conditions };
    for (const [k, v] of Object.entries(report.fields ?? {})) if (v === undefined) delete next[k];
    return next;
  });
}
