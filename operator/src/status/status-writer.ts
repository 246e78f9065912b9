import { isConflict } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { stableStringify } from '../kube/diff.ts';
import { type ResourceType, resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { deriveReady, orderConditions, setCondition } from './conditions.ts';

// biome-ignore lint/suspicious/noExplicitAny: status shapes differ per kind
export type Status = Record<string, any>;

/**
 * The pure half of a status transaction: apply `mutate` to a copy of the status, derive `Ready`, and
 * tell whether anything changed.
 */
export function nextStatus(
  obj: KubeObject,
  mutate: (status: Status, obj: KubeObject) => Status,
  now: () => Date = () => new Date(),
): { status: Status; changed: boolean } {
  const before: Status = obj.status ?? {};
  const draft = mutate(structuredClone(before), obj);
  const generation = obj.metadata.generation;
  const withReady = setCondition(draft.conditions, deriveReady(draft.conditions), generation, now);
  const status: Status = { ...draft, conditions: orderConditions(withReady) };
  return { status, changed: stableStringify(status) !== stableStringify(before) };
}

export interface StatusWriteResult {
  written: boolean;
  object: KubeObject | undefined;
}

/**
 * A status write as a small transaction: apply `mutate` to the cached copy (or a fresh read), skip when nothing
 * changed, write the status subresource with that copy's resourceVersion, and on a conflict read fresh and start over.
 * Returns written=false and object=undefined when the object is gone.
 */
export async function updateStatus(
  client: KubeClient,
  type: ResourceType,
  namespace: string,
  name: string,
  mutate: (status: Status, obj: KubeObject) => Status,
  options: { attempts?: number; now?: () => Date; cached?: KubeObject } = {},
): Promise<StatusWriteResult> {
  const attempts = options.attempts ?? 5;
  // Cheap path: when the mutation changes nothing on the cached copy, there is nothing to write. (A stale cache is
  // followed by the informer event that refreshes it, and by another reconcile.)
  if (options.cached && !nextStatus(options.cached, mutate, options.now).changed) {
    return { written: false, object: options.cached };
  }
  // The first attempt writes on top of the cached copy (its resourceVersion makes the write conditional): no GET
  // in the common case. A conflict means the cache was stale: read fresh and start over.
  let fresh: KubeObject | undefined = options.cached;
  for (let attempt = 1; ; attempt++) {
    try {
      fresh ??= await client.request<KubeObject>('GET', resourcePath(type, namespace, name));
    } catch (err) {
      if ((err as { status?: number }).status === 404) return { written: false, object: undefined };
      throw err;
    }
    const { status, changed } = nextStatus(fresh, mutate, options.now);
    if (!changed) return { written: false, object: fresh };
    try {
      const object = await client.request<KubeObject>('PUT', resourcePath(type, namespace, name, 'status'), {
        body: { ...fresh, status },
      });
      return { written: true, object };
    } catch (err) {
      if ((err as { status?: number }).status === 404) return { written: false, object: undefined };
      if (isConflict(err) && attempt < attempts) {
        fresh = undefined;
        continue;
      }
      throw err;
    }
  }
}
