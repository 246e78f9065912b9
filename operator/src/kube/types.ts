/** The parts of a Kubernetes object the operator's generic code touches. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
  managedFields?: unknown[];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: KubeObjectMeta;
  // biome-ignore lint/suspicious/noExplicitAny: the rest of an object is kind-specific JSON
  [field: string]: any;
}

/** `namespace/name`, the work-queue key of an object. */
export function objectKey(obj: { metadata: { namespace?: string; name?: string } }): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The controller owner reference of an object, if any. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}
