// The database of a TranslationService: a connection string the user brings (`database.secretRef`), or a
// CloudNativePG `Cluster` the operator runs (`database.cnpg`), whose generated `<cluster>-app` Secret holds the
// application user's connection string under `uri`. The Cluster is owned by the TranslationService, so the
// garbage collector removes it (and CloudNativePG its volumes) with it.
import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, names } from './meta.ts';

export const CNPG_API_VERSION = 'postgresql.cnpg.io/v1';
/** The database and its owner role inside the CloudNativePG cluster. */
export const CNPG_DATABASE = 'translation';

/** The Secret key holding the connection string the pods use. */
export function databaseSecretRef(ts: TranslationService, spec: TranslationServiceSpec): { name: string; key: string } {
  if (spec.database.secretRef) return spec.database.secretRef;
  return { name: `${names(ts).database}-app`, key: 'uri' };
}

/** The CloudNativePG Cluster of `spec.database.cnpg`, or null (none wanted; one made before stays with its owner). */
export function cnpgCluster(ts: TranslationService, spec: TranslationServiceSpec): KubeObject | null {
  const cnpg = spec.database.cnpg;
  if (!cnpg) return null;
  return {
    apiVersion: CNPG_API_VERSION,
    kind: 'Cluster',
    metadata: childMeta(ts, names(ts).database, 'database'),
    spec: {
      instances: cnpg.instances,
      ...(cnpg.imageName ? { imageName: cnpg.imageName } : {}),
      // Switchovers wait for the replica to catch up; an unsupervised update would restart the primary at once.
      primaryUpdateStrategy: 'unsupervised',
      storage: {
        size: String(cnpg.storage.size),
        ...(cnpg.storage.storageClass ? { storageClass: cnpg.storage.storageClass } : {}),
      },
      bootstrap: { initdb: { database: CNPG_DATABASE, owner: CNPG_DATABASE } },
      ...(cnpg.parameters ? { postgresql: { parameters: cnpg.parameters } } : {}),
      ...(cnpg.resources ? { resources: cnpg.resources } : {}),
    },
  };
}

export interface DatabaseState {
  ready: boolean;
  instances?: number;
  readyInstances?: number;
  phase?: string;
  primary?: string;
}

/** What a CloudNativePG Cluster's status says: ready once its primary serves (`readyInstances` ≥ 1, healthy phase). */
export function cnpgState(cluster: KubeObject | undefined): DatabaseState {
  if (!cluster) return { ready: false };
  const s = (cluster.status ?? {}) as {
    instances?: number;
    readyInstances?: number;
    phase?: string;
    currentPrimary?: string;
  };
  return {
    ready: (s.readyInstances ?? 0) >= 1 && s.phase === 'Cluster in healthy state',
    ...(s.instances !== undefined ? { instances: s.instances } : {}),
    ...(s.readyInstances !== undefined ? { readyInstances: s.readyInstances } : {}),
    ...(s.phase ? { phase: s.phase } : {}),
    ...(s.currentPrimary ? { primary: s.currentPrimary } : {}),
  };
}
