// The operator-managed cluster PKI of a LedgerCluster: one self-signed CA per cluster and one certificate per
// validator (serverAuth + clientAuth, so the same pair serves HTTPS and mutual-TLS peer calls). ECDSA P-256 keys
// (the broadest TLS support), PEM out, private keys as PKCS#8. node:crypto cannot create certificates, so the
// certificate bodies are built by @peculiar/x509 on Node's webcrypto; parsing and checks use node:crypto.
import { createPrivateKey, X509Certificate as NodeX509Certificate, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { OperatorError } from '../errors.ts';
import type * as X509 from './x509.ts';

// Loaded on first use: the library and its ASN.1 schemas cost ~40 MB of RSS, and only clusters with TLS need them.
let x509Module: Promise<typeof X509> | undefined;
const loadX509 = (): Promise<typeof X509> => {
  x509Module ??= import('./x509.ts');
  return x509Module;
};

export interface PemPair {
  certPem: string;
  keyPem: string;
}

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
const crypto = webcrypto;
const EC_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
/** notBefore is backdated this much so a peer whose clock runs a little behind accepts a fresh certificate. */
export const CLOCK_SKEW_MS = 5 * 60_000;
export const DEFAULT_CA_VALIDITY_DAYS = 3650;
export const DEFAULT_NODE_VALIDITY_DAYS = 90;

/** A PKI input the operator cannot use (bad name, foreign CA, key that does not match). */
export class PkiError extends OperatorError {
  constructor(message: string, options?: ErrorOptions) {
    super('LEDGER_PKI', message, options);
    this.name = 'PkiError';
  }
}

// A DNS name as Kubernetes Service DNS produces it (RFC 1123 labels), optionally a leading wildcard label.
const DNS_NAME = /^(\*\.)?([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

function checkValidity(days: number | undefined, fallback: number): number {
  const value = days ?? fallback;
  if (!Number.isInteger(value) || value < 1 || value > 36_500)
    throw new PkiError(`validityDays must be a whole number of days from 1 to 36500, got ${String(days)}`);
  return value;
}

function checkCommonName(commonName: string): void {
  if (commonName.length < 1 || commonName.length > 64 || /[\p{Cc},+"\\<>;=]/u.test(commonName))
    throw new PkiError(`commonName must be 1-64 characters without control characters or , + " \\ < > ; =`);
}

/** An IP literal in one canonical form (IPv6 compressed, lower case: node prints SANs as `FD00:0:…:10`). */
function canonicalIp(address: string): string {
  return isIP(address) === 6 ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address;
}

/** Normalized SAN entries: DNS names lower-cased as `dns:<name>`, IP literals canonical as `ip:<address>`. */
function normalizeNames(names: readonly string[]): string[] {
  return [...new Set(names.map((n) => (isIP(n) ? `ip:${canonicalIp(n)}` : `dns:${n.toLowerCase()}`)))].sort();
}

function checkDnsNames(dnsNames: readonly string[]): void {
  if (dnsNames.length < 1 || dnsNames.length > 100) throw new PkiError('dnsNames must hold 1 to 100 names');
  for (const name of dnsNames) {
    if (isIP(name)) continue;
    if (name.length > 253 || !DNS_NAME.test(name.toLowerCase()))
      throw new PkiError(`dnsNames: ${JSON.stringify(name.slice(0, 80))} is not a DNS name or IP address`);
  }
}

/** A positive 128-bit serial number (RFC 5280 §4.1.2.2: at most 20 octets, non-negative). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = ((bytes[0] ?? 0) & 0x7f) | 0x01;
  return bytes.toString('hex');
}

function validity(now: Date, days: number): { notBefore: Date; notAfter: Date } {
  if (Number.isNaN(now.getTime())) throw new PkiError('now is not a valid date');
  const seconds = Math.floor(now.getTime() / 1000) * 1000;
  return { notBefore: new Date(seconds - CLOCK_SKEW_MS), notAfter: new Date(seconds + days * DAY_MS) };
}

async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const x509 = await loadX509();
  const der = await crypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/**
 * Creates a cluster CA: a self-signed ECDSA P-256 certificate (CA, path length 0, keyCertSign + cRLSign).
 * @example const ca = await createClusterCa({ commonName: 'ledger-a CA', now: new Date() });
 */
export async function createClusterCa(opts: {
  commonName: string;
  now: Date;
  validityDays?: number;
}): Promise<PemPair> {
  checkCommonName(opts.commonName);
  const days = checkValidity(opts.validityDays, DEFAULT_CA_VALIDITY_DAYS);
  const x509 = await loadX509();
  const keys = await newKeyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: [{ CN: [opts.commonName] }],
      ...validity(opts.now, days),
      signingAlgorithm: SIGNING,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { certPem: cert.toString('pem'), keyPem: await keyToPem(keys.privateKey) };
}

async function loadCa(ca: PemPair): Promise<{ cert: X509.X509Certificate; signingKey: CryptoKey }> {
  const x509 = await loadX509();
  let cert: X509.X509Certificate;
  let nodeCert: NodeX509Certificate;
  let signingKey: CryptoKey;
  try {
    cert = new x509.X509Certificate(ca.certPem);
    nodeCert = new NodeX509Certificate(ca.certPem);
  } catch (err) {
    throw new PkiError('the CA certificate is not a PEM X.509 certificate', { cause: err });
  }
  if (!nodeCert.ca) throw new PkiError('the CA certificate is not a CA (basicConstraints cA is false)');
  try {
    const keyObject = createPrivateKey(ca.keyPem);
    if (keyObject.asymmetricKeyType !== 'ec' || keyObject.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new PkiError('the CA key must be an ECDSA P-256 key');
    if (!nodeCert.checkPrivateKey(keyObject)) throw new PkiError('the CA key does not match the CA certificate');
    signingKey = keyObject.toCryptoKey(EC_KEY, false, ['sign']);
  } catch (err) {
    if (err instanceof PkiError) throw err;
    throw new PkiError('the CA key is not a PEM private key', { cause: err });
  }
  return { cert, signingKey };
}

/**
 * Issues a validator's certificate from the cluster CA: ECDSA P-256, digitalSignature, EKU serverAuth +
 * clientAuth, SANs = `dnsNames` (IP literals become iPAddress SANs). The subject CN is `commonName`.
 * @example await issueNodeCertificate(ca, { commonName: 'ledger-a-v0', dnsNames: ['ledger-a-v0.ns.svc'], now: new Date() })
 */
export async function issueNodeCertificate(
  ca: PemPair,
  opts: { commonName: string; dnsNames: string[]; now: Date; validityDays?: number },
): Promise<PemPair> {
  checkCommonName(opts.commonName);
  checkDnsNames(opts.dnsNames);
  const days = checkValidity(opts.validityDays, DEFAULT_NODE_VALIDITY_DAYS);
  const x509 = await loadX509();
  const issuer = await loadCa(ca);
  const keys = await newKeyPair();
  const sans = normalizeNames(opts.dnsNames).map((entry) =>
    entry.startsWith('ip:')
      ? { type: 'ip' as const, value: entry.slice(3) }
      : { type: 'dns' as const, value: entry.slice(4) },
  );
  let { notBefore, notAfter } = validity(opts.now, days);
  // Never outlive the CA: a chain with a leaf valid past its issuer fails verification early.
  if (notAfter > issuer.cert.notAfter) notAfter = issuer.cert.notAfter;
  if (notBefore < issuer.cert.notBefore) notBefore = issuer.cert.notBefore;
  if (notAfter <= notBefore) throw new PkiError('the CA certificate has expired');
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: [{ CN: [opts.commonName] }],
      issuer: issuer.cert.subjectName,
      notBefore,
      notAfter,
      signingAlgorithm: SIGNING,
      publicKey: keys.publicKey,
      signingKey: issuer.signingKey,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension(sans),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(issuer.cert, false, crypto),
      ],
    },
    crypto,
  );
  return { certPem: cert.toString('pem'), keyPem: await keyToPem(keys.privateKey) };
}

/** SAN entries of a certificate in the same normalized form as `normalizeNames`. */
function certificateNames(cert: NodeX509Certificate): string[] {
  const names: string[] = [];
  for (const part of (cert.subjectAltName ?? '').split(', ')) {
    if (part.startsWith('DNS:')) names.push(part.slice(4));
    else if (part.startsWith('IP Address:')) names.push(part.slice(11));
  }
  return normalizeNames(names);
}

const EKU_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const EKU_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/**
 * True when the certificate should be replaced: it is unreadable, not yet valid, within the last third of its
 * lifetime (or expired), its SANs differ from `dnsNames`, its extended key usages leave out serverAuth or
 * clientAuth, or (when `caPem` is given) that CA did not issue it.
 * @example if (certificateNeedsRenewal(secretPem, { now: new Date(), dnsNames })) issue a new one
 */
export function certificateNeedsRenewal(
  certPem: string,
  opts: { now: Date; dnsNames: string[]; caPem?: string },
): boolean {
  let cert: NodeX509Certificate;
  try {
    cert = new NodeX509Certificate(certPem);
  } catch {
    return true;
  }
  const from = cert.validFromDate.getTime();
  const to = cert.validToDate.getTime();
  const now = opts.now.getTime();
  if (!(now >= from) || !(to > from)) return true;
  if (now >= to - (to - from) / 3) return true;
  // Both ends of a peer call present this certificate: an EKU list without serverAuth or clientAuth breaks one.
  const eku = cert.keyUsage;
  if (eku !== undefined && !(eku.includes(EKU_SERVER_AUTH) && eku.includes(EKU_CLIENT_AUTH))) return true;
  const want = normalizeNames(opts.dnsNames);
  const have = certificateNames(cert);
  if (want.length !== have.length || want.some((n, i) => n !== have[i])) return true;
  if (opts.caPem !== undefined) {
    try {
      const ca = new NodeX509Certificate(opts.caPem);
      if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return true;
    } catch {
      return true;
    }
  }
  return false;
}
