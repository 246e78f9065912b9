import { randomBytes } from 'node:crypto';
import { generateKeyPair, type KeyPair, keyFileContent } from '@scriptorium/ledger-protocol/keys';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import {
  childMeta,
  clusterNames,
  KEY_GENERATION_ANNOTATION,
  keySecretName,
  PUBLIC_KEY_ANNOTATION,
  VALIDATOR_LABEL,
  validatorNames,
} from './meta.ts';

/** File names inside the Secrets, as the pod mounts them. */
export const KEY_FILE = 'key.json';
export const TOKEN_FILE = 'token';

const GENERATED = {
  'scriptorium.dev/generated': 'true',
  'scriptorium.dev/rotation': 'never rewritten (a rotated key is a new Secret generation)',
};

/** A validator's key Secrets (every generation), oldest first. */
export function keySecrets(secrets: readonly KubeObject[], validator: string): KubeObject[] {
  return secrets
    .filter(
      (s) =>
        s.metadata.labels?.[VALIDATOR_LABEL] === validator &&
        s.metadata.annotations?.[PUBLIC_KEY_ANNOTATION] !== undefined &&
        (s.metadata.name === validatorNames(validator).keySecret || s.metadata.name?.startsWith(`${validator}-key-`)),
    )
    .sort((a, b) => keyGeneration(a) - keyGeneration(b));
}

/** A key Secret's generation (0: the validator's first key). */
export function keyGeneration(secret: KubeObject): number {
  const g = Number(secret.metadata.annotations?.[KEY_GENERATION_ANNOTATION] ?? 0);
  return Number.isSafeInteger(g) && g >= 0 ? g : 0;
}

/** 256 random bits, base64url (43 characters; the node needs at least 16). */
export function randomClusterToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A validator's key Secret: the node key file `{public_key, private_key}` exactly as the image's `keygen` writes
 * it (Ed25519 from node:crypto). The public key is also an annotation (it is not secret), so the operator reads
 * it from a metadata-only cache and never holds private keys in memory. Created once, never rewritten.
 */
export function keySecret(
  lc: LedgerCluster,
  validator: string,
  keys: KeyPair = generateKeyPair(),
  generation = 0,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...childMeta(lc, keySecretName(validator, generation), 'key', validator),
      annotations: {
        ...GENERATED,
        [PUBLIC_KEY_ANNOTATION]: keys.publicKey,
        ...(generation > 0 ? { [KEY_GENERATION_ANNOTATION]: String(generation) } : {}),
      },
    },
    type: 'Opaque',
    immutable: true,
    data: { [KEY_FILE]: Buffer.from(keyFileContent(keys)).toString('base64') },
  };
}

/**
 * Where the cluster token is: the Secret and key `spec.clusterTokenSecretRef` names (a chain shared with other
 * organizations), else the generated `<cluster>-token`.
 */
export function tokenRef(lc: LedgerCluster, spec: LedgerClusterSpec): { name: string; key: string } {
  return spec.clusterTokenSecretRef ?? { name: clusterNames(lc).tokenSecret, key: TOKEN_FILE };
}

/** The cluster token Secret (bearer token of the nodes' peer and admin endpoints). Created once. */
export function tokenSecret(lc: LedgerCluster, token: string = randomClusterToken()): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...childMeta(lc, clusterNames(lc).tokenSecret, 'token'), annotations: GENERATED },
    type: 'Opaque',
    immutable: true,
    data: { [TOKEN_FILE]: Buffer.from(token).toString('base64') },
  };
}

export interface Pem {
  certPem: string;
  keyPem: string;
}

/** The operator-managed cluster CA (`tls.crt`, `tls.key`). Created once. */
export function caSecret(lc: LedgerCluster, ca: Pem): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...childMeta(lc, clusterNames(lc).caSecret, 'ca'), annotations: GENERATED },
    type: 'kubernetes.io/tls',
    immutable: true,
    data: {
      'tls.crt': Buffer.from(ca.certPem).toString('base64'),
      'tls.key': Buffer.from(ca.keyPem).toString('base64'),
    },
  };
}

/** Annotations of a TLS Secret: what the metadata-only cache needs to decide a renewal. */
export const TLS_GENERATION_ANNOTATION = 'scriptorium.dev/tls-generation';
export const TLS_NOT_BEFORE_ANNOTATION = 'scriptorium.dev/not-before';
export const TLS_NOT_AFTER_ANNOTATION = 'scriptorium.dev/not-after';
export const TLS_DNS_NAMES_ANNOTATION = 'scriptorium.dev/dns-names';

/**
 * Name of a validator's TLS Secret of one generation: `<v>-tls`, then `<v>-tls-1`, `<v>-tls-2`… A renewal is a new
 * Secret (the operator never rewrites a Secret); the StatefulSet moves to it, one validator at a time.
 */
export function tlsSecretName(validator: string, generation: number): string {
  return generation === 0
    ? validatorNames(validator).tlsSecret
    : `${validatorNames(validator).tlsSecret}-${generation}`;
}

/** A validator's TLS Secret: its certificate and key, and the cluster CA certificate (`ca.crt`). */
export function tlsSecret(
  lc: LedgerCluster,
  validator: string,
  cert: Pem,
  caCertPem: string,
  info: { generation: number; notBefore: Date; notAfter: Date; dnsNames: readonly string[] },
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...childMeta(lc, tlsSecretName(validator, info.generation), 'tls', validator),
      annotations: {
        ...GENERATED,
        [TLS_GENERATION_ANNOTATION]: String(info.generation),
        [TLS_NOT_BEFORE_ANNOTATION]: info.notBefore.toISOString(),
        [TLS_NOT_AFTER_ANNOTATION]: info.notAfter.toISOString(),
        [TLS_DNS_NAMES_ANNOTATION]: info.dnsNames.join(','),
      },
    },
    type: 'kubernetes.io/tls',
    immutable: true,
    data: {
      'tls.crt': Buffer.from(cert.certPem).toString('base64'),
      'tls.key': Buffer.from(cert.keyPem).toString('base64'),
      'ca.crt': Buffer.from(caCertPem).toString('base64'),
    },
  };
}

/** The newest TLS Secret of a validator among `secrets` (metadata is enough), or undefined. */
export function currentTlsSecret(secrets: readonly KubeObject[], validator: string): KubeObject | undefined {
  let best: KubeObject | undefined;
  let bestGeneration = -1;
  for (const secret of secrets) {
    const labels = secret.metadata.labels ?? {};
    if (labels[VALIDATOR_LABEL] !== validator || labels['app.kubernetes.io/component'] !== 'tls') continue;
    const generation = Number(secret.metadata.annotations?.[TLS_GENERATION_ANNOTATION] ?? 0);
    if (Number.isSafeInteger(generation) && generation > bestGeneration) {
      best = secret;
      bestGeneration = generation;
    }
  }
  return best;
}

/** The generation number of a TLS Secret (0 for the first). */
export function tlsGeneration(secret: KubeObject): number {
  const generation = Number(secret.metadata.annotations?.[TLS_GENERATION_ANNOTATION] ?? 0);
  return Number.isSafeInteger(generation) && generation >= 0 ? generation : 0;
}

/**
 * Whether a validator's certificate must be renewed (the rule of `certificateNeedsRenewal`, from the Secret's
 * annotations): in the last third of its lifetime, not valid now, its DNS names differ, or unknown validity.
 */
export function tlsRenewalDue(secret: KubeObject, now: Date, dnsNames: readonly string[]): boolean {
  const a = secret.metadata.annotations ?? {};
  const notBefore = Date.parse(a[TLS_NOT_BEFORE_ANNOTATION] ?? '');
  const notAfter = Date.parse(a[TLS_NOT_AFTER_ANNOTATION] ?? '');
  if (!Number.isFinite(notBefore) || !Number.isFinite(notAfter) || notAfter <= notBefore) return true;
  const t = now.getTime();
  if (t < notBefore || t >= notBefore + ((notAfter - notBefore) * 2) / 3) return true;
  const have = new Set((a[TLS_DNS_NAMES_ANNOTATION] ?? '').split(',').filter(Boolean));
  return have.size !== new Set(dnsNames).size || dnsNames.some((n) => !have.has(n));
}

/** DNS names a validator is reached by (the certificate's SANs): `<v>`, `<v>.<ns>`, `<v>.<ns>.svc`, `….cluster.local`. */
export function validatorDnsNames(lc: LedgerCluster, validator: string): string[] {
  const ns = lc.metadata.namespace ?? 'default';
  return [validator, `${validator}.${ns}`, `${validator}.${ns}.svc`, `${validator}.${ns}.svc.cluster.local`];
}

/** Decode one key of a Secret's data (base64). */
export function secretValue(secret: KubeObject | undefined, key: string): string | undefined {
  const value = secret?.data?.[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}
