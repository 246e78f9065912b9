import { LC_KIND, type LedgerCluster } from '../../api/index.ts';
import type { KubeObjectMeta, OwnerReference } from '../../kube/types.ts';
import {
  COMPONENT_LABEL,
  managedSelector,
  ownedMeta,
  ownerReference as ownerRef,
  podSecurityContext as restrictedPod,
  standardLabels,
} from '../meta.ts';

export { containerSecurityContext, MANAGED_BY } from '../meta.ts';
export const APP_NAME = 'ledger-node';
/** Every object of one LedgerCluster carries this label (value: the cluster's name). */
export const CLUSTER_LABEL = 'scriptorium.dev/ledger-cluster';
/** Per-validator objects (key, TLS, Service, StatefulSet, its pod) carry this label (value: the validator's name). */
export const VALIDATOR_LABEL = 'scriptorium.dev/validator';
/** The key Secret of a validator carries its (public) Ed25519 key here, so a metadata-only cache knows it. */
export const PUBLIC_KEY_ANNOTATION = 'scriptorium.dev/public-key';
/** The genesis ConfigMap lists the validators it was generated from (comma-separated names). */
export const GENESIS_VALIDATORS_ANNOTATION = 'scriptorium.dev/genesis-validators';
/** Label selector of every object the operator creates for a LedgerCluster (informers filter on it). */
export const MANAGED_SELECTOR = managedSelector(APP_NAME);

export type Component =
  | 'validator'
  | 'client'
  | 'key'
  | 'tls'
  | 'ca'
  | 'token'
  | 'genesis'
  | 'peers'
  | 'ingress'
  | 'backup'
  | 'backup-verify';

/** Where a validator pod mounts each input (the image's defaults for the key and genesis files). */
export const PATHS = {
  keyDir: '/etc/ledger-node/key',
  genesisDir: '/etc/ledger-node/genesis',
  tokenDir: '/etc/ledger-node/token',
  tlsDir: '/etc/ledger-node/tls',
  trustedCaDir: '/etc/ledger-node/trusted-ca',
  dataDir: '/var/lib/ledger-node/data',
} as const;

/** Labels every child carries; per-validator objects add `scriptorium.dev/validator`. */
export function labels(lc: LedgerCluster, component: Component, validator?: string): Record<string, string> {
  return {
    ...standardLabels(APP_NAME, lc, component, CLUSTER_LABEL),
    ...(validator ? { [VALIDATOR_LABEL]: validator } : {}),
  };
}

/** Labels that select every validator pod of a cluster (client Service, `status.selector`). */
export function clusterPodSelector(lc: LedgerCluster): Record<string, string> {
  return {
    'app.kubernetes.io/name': APP_NAME,
    [COMPONENT_LABEL]: 'validator',
    [CLUSTER_LABEL]: lc.metadata.name,
  };
}

/** Labels that select one validator's pod. */
export function validatorPodSelector(lc: LedgerCluster, validator: string): Record<string, string> {
  return { ...clusterPodSelector(lc), [VALIDATOR_LABEL]: validator };
}

/** `status.selector` (scale subresource): the label selector of the validator pods as a string. */
export function selectorString(lc: LedgerCluster): string {
  return Object.entries(clusterPodSelector(lc))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export function ownerReference(lc: LedgerCluster): OwnerReference {
  return ownerRef(LC_KIND, lc);
}

export function childMeta(lc: LedgerCluster, name: string, component: Component, validator?: string): KubeObjectMeta {
  return ownedMeta(LC_KIND, lc, name, labels(lc, component, validator));
}

/**
 * Names of a cluster's objects. The CRD limits the cluster name to 40 characters, so `<name>-v99-0` (the pod)
 * plus the StatefulSet's revision-hash label stay within 63.
 */
export function clusterNames(lc: LedgerCluster) {
  const base = lc.metadata.name;
  return {
    clientService: base,
    ingress: base,
    pdb: base,
    caSecret: `${base}-ca`,
    tokenSecret: `${base}-token`,
    genesisConfigMap: `${base}-genesis`,
    peersConfigMap: `${base}-peers`,
  };
}

/** Names of one validator's objects (the validator's own name is its StatefulSet, Service and NODE_ID). */
export function validatorNames(validator: string) {
  return {
    statefulSet: validator,
    service: validator,
    pod: `${validator}-0`,
    /** The first key; a rotated validator's later keys are `keySecretName(validator, generation)`. */
    keySecret: `${validator}-key`,
    tlsSecret: `${validator}-tls`,
    pvc: `data-${validator}-0`,
  };
}

/** The key Secret of a validator's key generation: `<v>-key`, then `<v>-key-1`, `<v>-key-2`, … after rotations. */
export function keySecretName(validator: string, generation: number): string {
  return generation === 0 ? `${validator}-key` : `${validator}-key-${generation}`;
}

/** A key Secret's generation (annotation; 0 for the first key). */
export const KEY_GENERATION_ANNOTATION = 'scriptorium.dev/key-generation';

/** The restricted pod context; a validator's volume is chowned only when its root does not match already. */
export const podSecurityContext = { ...restrictedPod, fsGroupChangePolicy: 'OnRootMismatch' };
