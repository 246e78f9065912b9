import { API_VERSION, type TranslationService, TS_KIND } from '../../api/index.ts';
import type { KubeObjectMeta, OwnerReference } from '../../kube/types.ts';

export const MANAGED_BY = 'scriptorium-operator';
export const INSTANCE_LABEL = 'scriptorium.dev/translationservice';
export const COMPONENT_LABEL = 'app.kubernetes.io/component';
export const REVISION_ANNOTATION = 'scriptorium.dev/revision';
/** Label selector of every object the operator creates for a TranslationService (informers filter on it). */
export const MANAGED_SELECTOR = `app.kubernetes.io/managed-by=${MANAGED_BY},app.kubernetes.io/name=translation`;

export type Component = 'api' | 'migration' | 'worker' | 'retention' | 'secret';

/** Labels every child carries. */
export function labels(ts: TranslationService, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'translation',
    'app.kubernetes.io/instance': ts.metadata.name,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/managed-by': MANAGED_BY,
    'app.kubernetes.io/part-of': 'scriptorium',
    [INSTANCE_LABEL]: ts.metadata.name,
  };
}

/** Labels the Service, PDB and Deployment select the API pods by. */
export function selectorLabels(ts: TranslationService): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'translation',
    'app.kubernetes.io/instance': ts.metadata.name,
    'app.kubernetes.io/component': 'api',
  };
}

/** The controller owner reference: the garbage collector deletes children with their TranslationService. */
export function ownerReference(ts: TranslationService): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind: TS_KIND,
    name: ts.metadata.name,
    uid: ts.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function childMeta(ts: TranslationService, name: string, component: Component): KubeObjectMeta {
  return {
    name,
    namespace: ts.metadata.namespace ?? 'default',
    labels: labels(ts, component),
    ownerReferences: [ownerReference(ts)],
  };
}

/** Names of the children (the CRD limits metadata.name to 42 characters so every suffix fits). */
export function names(ts: TranslationService) {
  const base = ts.metadata.name;
  return {
    deployment: base,
    service: base,
    pdb: base,
    hpa: base,
    ingress: base,
    workerCronJob: `${base}-worker`,
    retentionCronJob: `${base}-retention`,
    workerSecret: `${base}-worker-secret`,
    sessionSecret: `${base}-session-secret`,
    migrationJob: (revision: string) => `${base}-migrate-${revision}`,
  };
}

/** Restricted Pod Security Standard: non-root, no privilege escalation, read-only root, no capabilities. */
export const podSecurityContext = {
  runAsNonRoot: true,
  runAsUser: 1000,
  runAsGroup: 1000,
  fsGroup: 1000,
  seccompProfile: { type: 'RuntimeDefault' },
};

export const containerSecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};
