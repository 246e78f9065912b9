import { X509Certificate } from 'node:crypto';
import { Block, checkGenesis } from '@scriptorium/ledger-protocol';
import { type KeyPair, parseKeyFile } from '@scriptorium/ledger-protocol/keys';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { OperatorError, SecretNotFoundError, SpecRefusedError } from '../../errors.ts';
import { type ApplyContext, createIfAbsent } from '../../kube/apply.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { controllerOf } from '../../kube/types.ts';
import { createClusterCa, issueNodeCertificate } from '../../ledger/index.ts';
import {
  caSecret,
  clusterNames,
  currentTlsSecret,
  GENESIS_FILE,
  keySecret,
  type Pem,
  PUBLIC_KEY_ANNOTATION,
  secretValue,
  tlsGeneration,
  tlsRenewalDue,
  tlsSecret,
  validatorDnsNames,
  validatorIndex,
  validatorNames,
} from '../../specs/ledger-cluster/index.ts';
import { type LedgerReconcileDeps, NODE_CERT_DAYS, readSecret } from './deps.ts';

/**
 * The first key Secret of a validator, created when absent (from `identity` when given: a restored cluster's
 * validators keep the chain's keys); returns its public key (from the annotation).
 */
export async function ensureKey(
  ctx: ApplyContext,
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  validator: string,
  identity?: () => Promise<Identity | undefined>,
) {
  const namespace = lc.metadata.namespace ?? '';
  const secretName = validatorNames(validator).keySecret;
  let meta = deps.lookup(RESOURCES.Secret, namespace, secretName);
  if (!meta) {
    const index = validatorIndex(lc.metadata.name, validator);
    const kept = index === undefined ? undefined : (await identity?.())?.keys.get(index);
    await createIfAbsent(ctx, RESOURCES.Secret, keySecret(lc, validator, kept));
    meta = deps.lookup(RESOURCES.Secret, namespace, secretName);
  } else if (controllerOf(meta)?.uid !== lc.metadata.uid) {
    await createIfAbsent(ctx, RESOURCES.Secret, meta); // refuses with NotOwnedError and an Event
  }
  const publicKey = meta?.metadata.annotations?.[PUBLIC_KEY_ANNOTATION];
  if (!publicKey || !/^[0-9a-f]{64}$/.test(publicKey)) {
    throw new OperatorError('KEY_UNREADABLE', `Secret ${secretName} has no valid ${PUBLIC_KEY_ANNOTATION} annotation`);
  }
  return publicKey;
}

/** A restored cluster's identity: the chain's genesis file and the validators' keys by index. */
export interface Identity {
  genesis: string;
  genesisKeys: Set<string>;
  keys: Map<number, KeyPair>;
}

/**
 * Reads `spec.bootstrap.fromBackup.identitySecretRef`: `genesis.json` (a valid block 0) and `v<i>.json` key files
 * (each private key matching its public key). Read only while a genesis or a key Secret is still to be made.
 */
export async function readIdentity(
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
): Promise<Identity | undefined> {
  const ref = spec.bootstrap?.fromBackup.identitySecretRef;
  if (!ref) return undefined;
  const field = 'spec.bootstrap.fromBackup.identitySecretRef';
  const secret = await readSecret(deps, lc.metadata.namespace ?? '', ref.name);
  if (!secret) throw new SecretNotFoundError(ref.name, undefined, field);
  const genesis = secretValue(secret, GENESIS_FILE);
  if (!genesis) throw new SecretNotFoundError(ref.name, GENESIS_FILE, field);
  let block: Block;
  try {
    block = Block.parse(JSON.parse(genesis));
  } catch {
    throw new SpecRefusedError('InvalidIdentity', `${ref.name}/${GENESIS_FILE} is not a block`);
  }
  const check = checkGenesis(block);
  if (!check.ok) throw new SpecRefusedError('InvalidIdentity', `${ref.name}/${GENESIS_FILE}: ${check.reason}`);
  const keys = new Map<number, KeyPair>();
  for (const name of Object.keys(secret.data ?? {})) {
    const m = /^v(\d{1,3})\.json$/.exec(name);
    if (!m) continue;
    try {
      keys.set(Number(m[1]), parseKeyFile(secretValue(secret, name) ?? ''));
    } catch (err) {
      throw new SpecRefusedError('InvalidIdentity', `${ref.name}/${name}: ${(err as Error).message}`);
    }
  }
  return { genesis, genesisKeys: new Set(block.validator_changes.map((c) => c.validator)), keys };
}

/** The CA that signs validator certificates: a referenced Secret, or the operator-managed one (created once). */
export async function clusterCa(
  ctx: ApplyContext | undefined,
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  withKey: boolean,
): Promise<Pem | undefined> {
  const namespace = lc.metadata.namespace ?? '';
  const ref = spec.tls.caSecretRef?.name;
  const name = ref ?? clusterNames(lc).caSecret;
  if (ctx && !ref && !deps.lookup(RESOURCES.Secret, namespace, name)) {
    const now = deps.now?.() ?? new Date();
    const ca = await createClusterCa({ commonName: `${lc.metadata.name}.${namespace} ledger CA`.slice(0, 64), now });
    await createIfAbsent(ctx, RESOURCES.Secret, caSecret(lc, ca));
  }
  if (!withKey) return undefined;
  const secret = await readSecret(deps, namespace, name);
  const certPem = secretValue(secret, 'tls.crt');
  const keyPem = secretValue(secret, 'tls.key');
  if (!certPem || !keyPem) {
    throw new OperatorError('CA_NOT_FOUND', `Secret ${name} must hold tls.crt and tls.key (the cluster CA)`);
  }
  return { certPem, keyPem };
}

/**
 * A certificate per validator from the cluster CA: issued when the validator has none, renewed (a new Secret
 * generation) in the last third of its lifetime or when its DNS names changed. Returns each validator's current
 * TLS Secret name.
 */
export async function ensureTls(
  ctx: ApplyContext,
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  members: readonly string[],
): Promise<Map<string, string>> {
  const namespace = lc.metadata.namespace ?? '';
  const tlsNames = new Map<string, string>();
  const now = deps.now?.() ?? new Date();
  const secrets = deps.list(RESOURCES.Secret, namespace).filter((x) => controllerOf(x)?.uid === lc.metadata.uid);
  const toIssue: Array<{ validator: string; generation: number; renewal: boolean }> = [];
  for (const v of members) {
    const current = currentTlsSecret(secrets, v);
    if (current && !tlsRenewalDue(current, now, validatorDnsNames(lc, v))) {
      tlsNames.set(v, current.metadata.name ?? '');
    } else {
      const generation = current ? tlsGeneration(current) + 1 : 0;
      toIssue.push({ validator: v, generation, renewal: current !== undefined });
    }
  }
  const ca = await clusterCa(ctx, deps, lc, spec, toIssue.length > 0);
  for (const item of toIssue) {
    if (!ca) break;
    const dnsNames = validatorDnsNames(lc, item.validator);
    const cert = await issueNodeCertificate(ca, {
      commonName: item.validator,
      dnsNames,
      now,
      validityDays: NODE_CERT_DAYS,
    });
    const x509 = new X509Certificate(cert.certPem);
    const secret = tlsSecret(lc, item.validator, cert, ca.certPem, {
      generation: item.generation,
      notBefore: new Date(x509.validFrom),
      notAfter: new Date(x509.validTo),
      dnsNames,
    });
    await createIfAbsent(ctx, RESOURCES.Secret, secret);
    tlsNames.set(item.validator, secret.metadata.name ?? '');
    if (item.renewal) {
      await deps.recorder.record(lc, {
        type: 'Normal',
        reason: 'CertificateRenewed',
        action: 'Create',
        note: `New certificate for ${item.validator} in Secret ${secret.metadata.name}; its pod moves to it in the next rollout step`,
      });
    }
  }
  return tlsNames;
}

const caCerts = new Map<string, string | undefined>();

/** The CA certificate (public) the operator's node client trusts; read once per Secret resourceVersion. */
export async function readCaCert(deps: LedgerReconcileDeps, lc: LedgerCluster, spec: LedgerClusterSpec) {
  const namespace = lc.metadata.namespace ?? '';
  const name = spec.tls.caSecretRef?.name ?? clusterNames(lc).caSecret;
  const version = deps.lookup(RESOURCES.Secret, namespace, name)?.metadata.resourceVersion;
  const memo = `${namespace}/${name}@${version}`;
  if (version && caCerts.has(memo)) return caCerts.get(memo);
  const pem = secretValue(await readSecret(deps, namespace, name), 'tls.crt');
  if (caCerts.size > 1000) caCerts.clear();
  if (version) caCerts.set(memo, pem);
  return pem;
}
