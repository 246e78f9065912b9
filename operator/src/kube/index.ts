export {
  type ApplyContext,
  type ApplyResult,
  apply,
  createIfAbsent,
  decide,
  FIELD_MANAGER,
  HASH_ANNOTATION,
} from './apply.ts';
export { KubeClient, type RequestOptions, type WatchEvent } from './client.ts';
export { firstDifference, hashOf, isSubset, stableStringify } from './diff.ts';
export { type EventInput, EventRecorder, microTime } from './events.ts';
export { Informer, type InformerOptions } from './informer.ts';
export { LeaderElector, leaseIsFree } from './leader-election.ts';
export { parseQuantity, quantitiesEqual } from './quantity.ts';
export { RESOURCES, type ResourceType, resourceForKind, resourcePath } from './resources.ts';
export { controllerOf, type KubeObject, type OwnerReference, objectKey, splitKey } from './types.ts';
export { ExponentialBackoff, WorkQueue } from './work-queue.ts';
