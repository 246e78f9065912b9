import { Block, blockHash, checkGenesis, genesisFileContent } from '@scriptorium/ledger-protocol';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, clusterNames, GENESIS_VALIDATORS_ANNOTATION } from './meta.ts';

export const GENESIS_FILE = 'genesis.json';

/** The genesis file: byte for byte what the image's `genesis --chain-id ID --timestamp MS KEY…` command writes. */
export { genesisFileContent };

/** Chain id of a cluster: `spec.genesis.chainId`, else `<namespace>.<name>`. */
export function chainIdOf(lc: LedgerCluster, spec: LedgerClusterSpec): string {
  return spec.genesis?.chainId ?? `${lc.metadata.namespace ?? 'default'}.${lc.metadata.name}`;
}

/** Genesis time in ms: `spec.genesis.time` (RFC 3339) when set and valid, else `now`. */
export function genesisTimeMs(spec: LedgerClusterSpec, now: Date): number {
  const parsed = spec.genesis?.time ? Date.parse(spec.genesis.time) : Number.NaN;
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : now.getTime();
}

/**
 * The genesis ConfigMap, immutable: generated ONCE from the initial validators' public keys. The reconciler only
 * creates it when absent; a later spec never changes it (the API server refuses changes to an immutable ConfigMap).
 */
export function genesisConfigMap(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validators: ReadonlyArray<{ name: string; publicKey: string }>,
  now: Date,
): KubeObject {
  const content = genesisFileContent(
    validators.map((v) => v.publicKey),
    chainIdOf(lc, spec),
    genesisTimeMs(spec, now),
  );
  return genesisConfigMapOf(
    lc,
    content,
    validators.map((v) => v.name),
  );
}

/**
 * The genesis ConfigMap of a cluster restored from a backup: the chain's own genesis file (from the identity
 * Secret of `spec.bootstrap.fromBackup`), with the names of the validators whose keys it lists.
 */
export function genesisConfigMapOf(lc: LedgerCluster, content: string, validatorNames: readonly string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      ...childMeta(lc, clusterNames(lc).genesisConfigMap, 'genesis'),
      annotations: { [GENESIS_VALIDATORS_ANNOTATION]: validatorNames.join(',') },
    },
    immutable: true,
    data: { [GENESIS_FILE]: content },
  };
}

/** The validator names recorded on a genesis ConfigMap. */
export function genesisValidators(cm: KubeObject | undefined): string[] {
  const value = cm?.metadata.annotations?.[GENESIS_VALIDATORS_ANNOTATION];
  return value ? value.split(',').filter(Boolean) : [];
}

/** Where a joined chain's genesis came from (annotation on the copy). */
export const GENESIS_FROM_ANNOTATION = 'scriptorium.dev/genesis-from';

/**
 * Checks a published genesis file (`spec.genesis.from`): a valid block 0, and the pinned hash when one is given.
 * Returns the block, or a string saying why it is refused.
 */
export function checkPublishedGenesis(text: string, hash: string | undefined): Block | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'the published genesis is not JSON';
  }
  const parsed = Block.safeParse(json);
  if (!parsed.success) return `the published genesis is not a block (${parsed.error.issues[0]?.message ?? ''})`;
  const check = checkGenesis(parsed.data);
  if (!check.ok) return `the published genesis is not a valid block 0: ${check.reason}`;
  const got = blockHash(parsed.data.header);
  if (hash !== undefined && got !== hash) return `the published genesis hashes to ${got}, not the pinned ${hash}`;
  return parsed.data;
}

/**
 * The genesis ConfigMap of a cluster that joins another organization's chain: the published file, byte for byte
 * (every node of the chain must hold the same block 0), immutable. None of this cluster's validators is in it: they
 * start as followers and join through membership.
 */
export function joinedGenesisConfigMap(lc: LedgerCluster, text: string, source: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      ...childMeta(lc, clusterNames(lc).genesisConfigMap, 'genesis'),
      annotations: { [GENESIS_VALIDATORS_ANNOTATION]: '', [GENESIS_FROM_ANNOTATION]: source.slice(0, 1000) },
    },
    immutable: true,
    data: { [GENESIS_FILE]: text },
  };
}
