import type { ResourceType } from '../../kube/resources.ts';

/** Kinds only the LedgerCluster reconciler uses (the shared table in kube/resources.ts has the rest). */
export const STATEFUL_SET: ResourceType = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  namespaced: true,
};
export const PVC: ResourceType = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  plural: 'persistentvolumeclaims',
  namespaced: true,
};
