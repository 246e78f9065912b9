import { type TranslationService, TS_KIND } from '../../api/index.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';

/** `namespace/name` of the TranslationService that controls `obj`, if one does. */
export function ownerKey(obj: KubeObject): string | undefined {
  const ref = controllerOf(obj);
  if (!ref || ref.kind !== TS_KIND || !ref.apiVersion.startsWith('scriptorium.dev/')) return undefined;
  return `${obj.metadata.namespace ?? ''}/${ref.name}`;
}

export { needsReconcile } from '../controller-runtime.ts';

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
