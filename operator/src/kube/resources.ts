/** The kinds the operator reads or writes, with their REST names. */
export interface ResourceType {
  apiVersion: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

export const RESOURCES = {
  Deployment: { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  Service: { apiVersion: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  Secret: { apiVersion: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  Pod: { apiVersion: 'v1', kind: 'Pod', plural: 'pods', namespaced: true },
  Namespace: { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  CoreEvent: { apiVersion: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  Event: { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true },
  Job: { apiVersion: 'batch/v1', kind: 'Job', plural: 'jobs', namespaced: true },
  CronJob: { apiVersion: 'batch/v1', kind: 'CronJob', plural: 'cronjobs', namespaced: true },
  Ingress: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', plural: 'ingresses', namespaced: true },
  HorizontalPodAutoscaler: {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    namespaced: true,
  },
  PodDisruptionBudget: {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
  },
  Lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases', namespaced: true },
  CustomResourceDefinition: {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
  TranslationService: {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'TranslationService',
    plural: 'translationservices',
    namespaced: true,
  },
  LedgerCluster: {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'LedgerCluster',
    plural: 'ledgerclusters',
    namespaced: true,
  },
  /** CloudNativePG's Cluster (`database.cnpg` of a TranslationService); read and applied, not watched. */
  CnpgCluster: { apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster', plural: 'clusters', namespaced: true },
} as const satisfies Record<string, ResourceType>;

export function resourceForKind(apiVersion: string, kind: string): ResourceType {
  const found = Object.values(RESOURCES).find((r) => r.apiVersion === apiVersion && r.kind === kind);
  if (!found) throw new Error(`unknown resource ${apiVersion} ${kind}`);
  return found;
}

/**
 * REST path of a collection or an object.
 * @example resourcePath(RESOURCES.Deployment, 'default', 'web') // '/apis/apps/v1/namespaces/default/deployments/web'
 */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  let path = base;
  if (type.namespaced && namespace) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${type.plural}`;
  if (name) path += `/${encodeURIComponent(name)}`;
  if (name && subresource) path += `/${subresource}`;
  return path;
}
