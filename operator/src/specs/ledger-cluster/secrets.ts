import { randomBytes } from 'node:crypto';
import { generateKeyPair, type KeyPair } from '@scriptorium/ledger-node/crypto';
import type { LedgerCluster } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, clusterNames, PUBLIC_KEY_ANNOTATION, validatorNames } from './meta.ts';

/** File names inside the Secrets, as the pod mounts them. */
export const KEY_FILE = 'key.json';
export const TOKEN_FILE = 'token';

const GENERATED = { 'scriptorium.dev/generated': 'true', 'scriptorium.dev/rotation': 'never (created once)' };

/** 256 random bits, base64url (43 characters; the node needs at least 16). */
export function randomClusterToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * A validator's key Secret: the node key file `{public_key, private_key}` exactly as the image's `keygen` writes
 * it (Ed25519 from node:crypto). The public key is also an annotation (it is not secret), so the operator reads
 * it from a metadata-only cache and never holds private keys in memory. Created once, never rewritten.
 */
export function keySecret(lc: LedgerCluster, validator: string, keys: KeyPair = generateKeyPair()): KubeObject {
  const file = `${JSON.stringify({ public_key: keys.publicKey, private_key: keys.privateKey })}\n`;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      ...childMeta(lc, validatorNames(validator).keySecret, 'key', validator),
      annotations: { ...GENERATED, [PUBLIC_KEY_ANNOTATION]: keys.publicKey },
    },
    type: 'Opaque',
    immutable: true,
    data: { [KEY_FILE]: Buffer.from(file).toString('base64') },
  };
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

/** A validator's TLS Secret: its certificate and key, and the cluster CA certificate (`ca.crt`). */
export function tlsSecret(lc: LedgerCluster, validator: string, cert: Pem, caCertPem: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...childMeta(lc, validatorNames(validator).tlsSecret, 'tls', validator), annotations: GENERATED },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(cert.certPem).toString('base64'),
      'tls.key': Buffer.from(cert.keyPem).toString('base64'),
      'ca.crt': Buffer.from(caCertPem).toString('base64'),
    },
  };
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
