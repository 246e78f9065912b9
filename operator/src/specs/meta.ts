// Metadata every child object carries, whatever kind of custom resource owns it: the recommended labels, the
// controller owner reference, and the restricted Pod Security Standard of its pods. Each kind's `meta.ts` adds only
// its own label, names and selector on top.
import { API_VERSION } from '../api/index.ts';
import type { KubeObjectMeta, OwnerReference } from '../kube/types.ts';

/** `app.kubernetes.io/managed-by` of every object the operator creates. */
export const MANAGED_BY = 'scriptorium-operator';
export const PART_OF = 'scriptorium';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';

/** A custom resource as far as its children's metadata is concerned. */
export interface Owner {
  metadata: { name: string; namespace?: string; uid?: string };
}

/**
 * The recommended `app.kubernetes.io/*` labels plus the owner's own label (its name as the value).
 *
 * @example standardLabels('translation', ts, 'api', INSTANCE_LABEL)
 */
export function standardLabels(
  app: string,
  owner: Owner,
  component: string,
  ownerLabel: string,
): Record<string, string> {
  return {
    'app.kubernetes.io/name': app,
    'app.kubernetes.io/instance': owner.metadata.name,
    [COMPONENT_LABEL]: component,
    'app.kubernetes.io/managed-by': MANAGED_BY,
    'app.kubernetes.io/part-of': PART_OF,
    [ownerLabel]: owner.metadata.name,
  };
}

/** Label selector of every object the operator creates for one app (the informers filter on it). */
export function managedSelector(app: string): string {
  return `app.kubernetes.io/managed-by=${MANAGED_BY},app.kubernetes.io/name=${app}`;
}

/** The controller owner reference: the garbage collector deletes children with their owner. */
export function ownerReference(kind: string, owner: Owner): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Name, namespace (the owner's), labels and owner reference of a child of a `kind` resource. */
export function ownedMeta(kind: string, owner: Owner, name: string, labels: Record<string, string>): KubeObjectMeta {
  return {
    name,
    namespace: owner.metadata.namespace ?? 'default',
    labels,
    ownerReferences: [ownerReference(kind, owner)],
  };
}

/** Restricted Pod Security Standard. uid 1000 is the `node` user of the images (node:24-bookworm-slim). */
export const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

/** Non-root, no privilege escalation, read-only root, no capabilities. */
export const containerSecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
