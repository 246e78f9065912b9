import { X509Certificate } from 'node:crypto';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { OperatorError } from '../../errors.ts';
import { type ApplyContext, createIfAbsent } from '../../kube/apply.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { controllerOf } from '../../kube/types.ts';
import { createClusterCa, issueNodeCertificate } from '../../ledger/index.ts';
import {
  caSecret,
  clusterNames,
  currentTlsSecret,
  keySecret,
  type Pem,
  PUBLIC_KEY_ANNOTATION,
  secretValue,
  tlsGeneration,
  tlsRenewalDue,
  tlsSecret,
  validatorDnsNames,
  validatorNames,
} from '../../specs/ledger-cluster/index.ts';
import { type LedgerReconcileDeps, NODE_CERT_DAYS, readSecret } from './deps.ts';

/** The key Secret of a validator, created when absent; returns its public key (from the annotation). */
export async function ensureKey(ctx: ApplyContext, deps: LedgerReconcileDeps, lc: LedgerCluster, validator: string) {
  const namespace = lc.metadata.namespace ?? '';
  const secretName = validatorNames(validator).keySecret;
  let meta = deps.lookup(RESOURCES.Secret, namespace, secretName);
  if (!meta) {
    await createIfAbsent(ctx, RESOURCES.Secret, keySecret(lc, validator));
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
