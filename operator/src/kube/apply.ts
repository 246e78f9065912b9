import { isNotFound, KubeApiError, NotOwnedError } from '../errors.ts';
import type { KubeClient } from './client.ts';
import { firstDifference, hashOf } from './diff.ts';
import type { EventBatch, EventInput, EventRecorder } from './events.ts';
import { type ResourceType, resourcePath } from './resources.ts';
import { controllerOf, type KubeObject } from './types.ts';

/** The one field manager the operator applies with. */
export const FIELD_MANAGER = 'scriptorium-operator';
/** Hash of the last applied desired object: a changed desired state re-applies even when it only drops fields. */
export const HASH_ANNOTATION = 'scriptorium.dev/applied-hash';

export type ApplyResult = 'created' | 'updated' | 'unchanged' | 'deleted' | 'absent';

export interface ApplyContext {
  client: KubeClient;
  /** The custom resource that controls every object applied through this context. */
  owner: KubeObject;
  /** Cached copy of an object (from an informer); undefined = not in the cache. */
  lookup?: (type: ResourceType, namespace: string, name: string) => KubeObject | undefined;
  /** Called with the API's answer to each write, to refresh the cache. */
  onWrite?: (type: ResourceType, obj: KubeObject) => void;
  recorder?: EventRecorder;
  /** When set, creates, updates and deletes are batched here (one Event per reason per reconcile). */
  events?: EventBatch;
  /** Count of writes made through this context (tests and the benchmark read it). */
  writes?: { count: number };
}

/** What apply would do, decided without I/O. */
export type ApplyDecision =
  | { action: 'create' }
  | { action: 'update'; why: string }
  | { action: 'none' }
  | { action: 'delete' }
  | { action: 'refuse'; controller: string };

/** The desired object with its hash annotation set. */
export function withHash(desired: KubeObject): KubeObject {
  const { [HASH_ANNOTATION]: _old, ...annotations } = desired.metadata.annotations ?? {};
  const hash = hashOf({ ...desired, metadata: { ...desired.metadata, annotations } });
  return { ...desired, metadata: { ...desired.metadata, annotations: { ...annotations, [HASH_ANNOTATION]: hash } } };
}

/**
 * Decide what to do with one object: the ownership check (an object controlled by anything else is refused),
 * skip when nothing differs, a null desired object means delete.
 */
export function decide(desired: KubeObject | null, current: KubeObject | undefined, ownerUid: string): ApplyDecision {
  const controller = current ? controllerOf(current) : undefined;
  const ours = controller?.uid === ownerUid;
  if (desired === null)
    return current && ours && !current.metadata.deletionTimestamp ? { action: 'delete' } : { action: 'none' };
  if (!current) return { action: 'create' };
  if (!ours) return { action: 'refuse', controller: controller ? `${controller.kind}/${controller.name}` : 'none' };
  const hashed = withHash(desired);
  if (current.metadata.annotations?.[HASH_ANNOTATION] !== hashed.metadata.annotations?.[HASH_ANNOTATION]) {
    return { action: 'update', why: 'desired state changed' };
  }
  const diff = firstDifference(hashed, current);
  if (diff) return { action: 'update', why: `drift at ${diff}` };
  return { action: 'none' };
}

async function current(
  ctx: ApplyContext,
  type: ResourceType,
  namespace: string,
  name: string,
  forDelete = false,
  latest = false,
): Promise<KubeObject | undefined> {
  const cached = ctx.lookup?.(type, namespace, name);
  if (cached) return cached;
  // Everything this operator controls carries its labels, so it is in the (synced) cache: a miss means there
  // is nothing of ours to delete. Before a create, read the API: a foreign object must be refused, not adopted.
  if (forDelete && ctx.lookup) return undefined;
  try {
    // resourceVersion=0: served from the API server's watch cache, not a quorum read of etcd (as current as our
    // own informers, which is what this check relies on anyway). After a 409 the caller needs the latest copy.
    return await ctx.client.request<KubeObject>('GET', resourcePath(type, namespace, name), {
      query: latest ? undefined : { resourceVersion: '0' },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function note(ctx: ApplyContext, event: EventInput): Promise<void> {
  if (ctx.events) ctx.events.add(event);
  else await ctx.recorder?.record(ctx.owner, event);
}

function describe(type: ResourceType, name: string): string {
  return `${type.kind} ${name}`;
}

/**
 * Bring one child object to its desired state with server-side apply (field manager `scriptorium-operator`,
 * `force` only once the ownership check passed). `desired === null` deletes the object if this owner controls it.
 * Records an Event for every create, update, delete and refusal.
 */
export async function apply(
  ctx: ApplyContext,
  type: ResourceType,
  namespace: string,
  name: string,
  desired: KubeObject | null,
): Promise<ApplyResult> {
  const existing = await current(ctx, type, namespace, name, desired === null);
  const decision = decide(desired, existing, ctx.owner.metadata.uid ?? '');
  const what = describe(type, name);
  switch (decision.action) {
    case 'none':
      return existing ? 'unchanged' : 'absent';
    case 'refuse': {
      const err = new NotOwnedError(what, decision.controller);
      await ctx.recorder?.record(ctx.owner, {
        type: 'Warning',
        reason: 'Refused',
        action: 'Refuse',
        note: err.message,
      });
      throw err;
    }
    case 'delete': {
      try {
        await ctx.client.request('DELETE', resourcePath(type, namespace, name), {
          body: { propagationPolicy: 'Background', preconditions: { uid: existing?.metadata.uid } },
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      if (ctx.writes) ctx.writes.count++;
      await note(ctx, {
        type: 'Normal',
        reason: 'Deleted',
        action: 'Delete',
        note: `Deleted ${what}`,
      });
      return 'deleted';
    }
    case 'create':
    case 'update': {
      const body = withHash(desired!);
      const answer = await ctx.client.request<KubeObject>('PATCH', resourcePath(type, namespace, name), {
        body,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: FIELD_MANAGER, force: decision.action === 'update' ? true : undefined },
      });
      if (ctx.writes) ctx.writes.count++;
      ctx.onWrite?.(type, answer);
      if (decision.action === 'create') {
        await note(ctx, {
          type: 'Normal',
          reason: 'Created',
          action: 'Create',
          note: `Created ${what}`,
        });
        return 'created';
      }
      await note(ctx, {
        type: 'Normal',
        reason: 'Updated',
        action: 'Update',
        note: `Updated ${what} (${decision.why})`,
      });
      return 'updated';
    }
  }
}

/**
 * Create an object only when it is absent; never update it (generated Secrets are created once and never
 * rotated silently). An existing object controlled by someone else is refused.
 */
export async function createIfAbsent(ctx: ApplyContext, type: ResourceType, desired: KubeObject): Promise<ApplyResult> {
  const namespace = desired.metadata.namespace ?? '';
  const name = desired.metadata.name ?? '';
  const what = describe(type, name);
  let existing = ctx.lookup?.(type, namespace, name);
  if (!existing) {
    // Create straight away; AlreadyExists means it exists after all (not ours, or not cached yet): read it.
    try {
      const answer = await ctx.client.request<KubeObject>('POST', resourcePath(type, namespace), {
        body: desired,
        query: { fieldManager: FIELD_MANAGER },
      });
      if (ctx.writes) ctx.writes.count++;
      ctx.onWrite?.(type, { ...answer, apiVersion: type.apiVersion, kind: type.kind });
      await note(ctx, { type: 'Normal', reason: 'Created', action: 'Create', note: `Created ${what}` });
      return 'created';
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 409)) throw err;
      existing = await current(ctx, type, namespace, name, false, true);
      if (!existing) throw err; // deleted in between: the next reconcile creates it
    }
  }
  if (controllerOf(existing)?.uid !== ctx.owner.metadata.uid) {
    const err = new NotOwnedError(what, controllerOf(existing)?.name ?? 'none');
    await ctx.recorder?.record(ctx.owner, { type: 'Warning', reason: 'Refused', action: 'Refuse', note: err.message });
    throw err;
  }
  return 'unchanged';
}
