import { type TranslationService, TS_KIND } from '../../api/index.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';

/** `namespace/name` of the TranslationService that controls `obj`, if one does. */
export function ownerKey(obj: KubeObject): string | undefined {
  const ref = controllerOf(obj);
  if (!ref || ref.kind !== TS_KIND || !ref.apiVersion.startsWith('scriptorium.dev/')) return undefined;
  return `${obj.metadata.namespace ?? ''}/${ref.name}`;
}

/** Whether an update of a TranslationService needs a reconcile (not for our own status writes). */
export function needsReconcile(obj: KubeObject, old: KubeObject | undefined): boolean {
  if (!old) return true;
  const a = obj.metadata;
  const b = old.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.finalizers ?? []) !== JSON.stringify(b.finalizers ?? []) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    a.uid !== b.uid
  );
}

/** Names of the Secrets a TranslationService's spec points at (raw spec: works before parsing). */
export function referencedSecretNames(ts: TranslationService): Set<string> {
  const spec = ts.spec ?? {};
  const names = [
    spec.database?.secretRef?.name,
    spec.provider?.apiKeySecretRef?.name,
    spec.oauth?.clientSecretRef?.name,
    spec.billing?.webhookSecretRef?.name,
  ];
  return new Set(names.filter((n): n is string => typeof n === 'string'));
}
