import { type TranslationService, TS_KIND } from '../../api/index.ts';
import type { KubeObjectMeta, OwnerReference } from '../../kube/types.ts';
import { COMPONENT_LABEL, managedSelector, ownedMeta, ownerReference as ownerRef, standardLabels } from '../meta.ts';

export { COMPONENT_LABEL, containerSecurityContext, MANAGED_BY, podSecurityContext } from '../meta.ts';
export const APP_NAME = 'translation';
export const INSTANCE_LABEL = 'scriptorium.dev/translationservice';
export const REVISION_ANNOTATION = 'scriptorium.dev/revision';
/** Label selector of every object the operator creates for a TranslationService (informers filter on it). */
export const MANAGED_SELECTOR = managedSelector(APP_NAME);

export type Component = 'api' | 'migration' | 'worker' | 'retention' | 'secret' | 'database';

/** Labels every child carries. */
export function labels(ts: TranslationService, component: Component): Record<string, string> {
  return standardLabels(APP_NAME, ts, component, INSTANCE_LABEL);
}

/** Labels the Service, PDB and Deployment select the API pods by. */
export function selectorLabels(ts: TranslationService): Record<string, string> {
  return {
    'app.kubernetes.io/name': APP_NAME,
    'app.kubernetes.io/instance': ts.metadata.name,
    [COMPONENT_LABEL]: 'api',
  };
}

/** The controller owner reference: the garbage collector deletes children with their TranslationService. */
export function ownerReference(ts: TranslationService): OwnerReference {
  return ownerRef(TS_KIND, ts);
}

export function childMeta(ts: TranslationService, name: string, component: Component): KubeObjectMeta {
  return ownedMeta(TS_KIND, ts, name, labels(ts, component));
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
    /** The CloudNativePG Cluster (`database.cnpg`); its Secrets are `<database>-app`, `<database>-superuser`. */
    database: `${base}-db`,
    migrationJob: (revision: string) => `${base}-migrate-${revision}`,
  };
}
