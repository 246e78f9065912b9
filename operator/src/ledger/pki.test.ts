import { createPrivateKey, createPublicKey, webcrypto, X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CLOCK_SKEW_MS,
  certificateNeedsRenewal,
  createClusterCa,
  DEFAULT_NODE_VALIDITY_DAYS,
  issueNodeCertificate,
  type PemPair,
  PkiError,
} from './pki.ts';
import * as x509 from './x509.ts';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const DAY = 86_400_000;
const NAMES = ['ledger-a-v0.prod.svc', 'ledger-a-v0.prod.svc.cluster.local', '10.0.0.7'];
let ca: PemPair;
let node: PemPair;

beforeAll(async () => {
  ca = await createClusterCa({ commonName: 'ledger-a cluster CA', now: NOW });
  node = await issueNodeCertificate(ca, { commonName: 'ledger-a-v0', dnsNames: NAMES, now: NOW });
});

describe('createClusterCa', () => {
  it('is a self-signed P-256 CA that node:crypto parses, with PKCS#8 key', () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=ledger-a cluster CA');
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(ca.keyPem.startsWith('-----BEGIN PRIVATE KEY-----')).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
    expect(cert.validFromDate.getTime()).toBe(NOW.getTime() - CLOCK_SKEW_MS);
    expect(cert.validToDate.getTime()).toBe(NOW.getTime() + 3650 * DAY);
    expect(cert.keyUsage).toBeUndefined(); // no EKU on the CA
    const parsed = new x509.X509Certificate(ca.certPem);
    const usage = parsed.getExtension(x509.KeyUsagesExtension);
    expect(usage?.critical).toBe(true);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    const basic = parsed.getExtension(x509.BasicConstraintsExtension);
    expect([basic?.ca, basic?.pathLength, basic?.critical]).toEqual([true, 0, true]);
  });

  it('each CA has a fresh key and serial', async () => {
    const other = await createClusterCa({ commonName: 'x', now: NOW, validityDays: 1 });
    const a = new X509Certificate(ca.certPem);
    const b = new X509Certificate(other.certPem);
    expect(a.serialNumber).not.toBe(b.serialNumber);
    expect(a.publicKey.equals(b.publicKey)).toBe(false);
    expect(b.validToDate.getTime()).toBe(NOW.getTime() + DAY);
  });

  it('refuses bad input with a PkiError', async () => {
    await expect(createClusterCa({ commonName: '', now: NOW })).rejects.toBeInstanceOf(PkiError);
    await expect(createClusterCa({ commonName: 'a,b=c', now: NOW })).rejects.toBeInstanceOf(PkiError);
    await expect(createClusterCa({ commonName: 'a', now: NOW, validityDays: 0 })).rejects.toBeInstanceOf(PkiError);
    await expect(createClusterCa({ commonName: 'a', now: NOW, validityDays: 1.5 })).rejects.toBeInstanceOf(PkiError);
    await expect(createClusterCa({ commonName: 'a', now: new Date(Number.NaN) })).rejects.toBeInstanceOf(PkiError);
  });
});

describe('issueNodeCertificate', () => {
  it('is issued and signed by the CA, with the SANs, both EKUs and the validity asked for', () => {
    const cert = new X509Certificate(node.certPem);
    const issuer = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(false);
    expect(cert.subject).toBe('CN=ledger-a-v0');
    expect(cert.checkIssued(issuer)).toBe(true);
    expect(cert.verify(issuer.publicKey)).toBe(true);
    expect(cert.subjectAltName?.split(', ').sort()).toEqual(
      ['DNS:ledger-a-v0.prod.svc', 'DNS:ledger-a-v0.prod.svc.cluster.local', 'IP Address:10.0.0.7'].sort(),
    );
    expect(cert.keyUsage?.sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(cert.checkHost('ledger-a-v0.prod.svc')).toBe('ledger-a-v0.prod.svc');
    expect(cert.checkIP('10.0.0.7')).toBe('10.0.0.7');
    expect(cert.checkHost('ledger-a-v1.prod.svc')).toBeUndefined();
    expect(cert.validFromDate.getTime()).toBe(NOW.getTime() - CLOCK_SKEW_MS);
    expect(cert.validToDate.getTime()).toBe(NOW.getTime() + DEFAULT_NODE_VALIDITY_DAYS * DAY);
    expect(cert.checkPrivateKey(createPrivateKey(node.keyPem))).toBe(true);
    expect(createPublicKey(node.keyPem).asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const usage = new x509.X509Certificate(node.certPem).getExtension(x509.KeyUsagesExtension);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    // Not the CA's key.
    expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(false);
  });

  it('never outlives its CA', async () => {
    const shortCa = await createClusterCa({ commonName: 'short', now: NOW, validityDays: 10 });
    const leaf = await issueNodeCertificate(shortCa, { commonName: 'n', dnsNames: ['n.ns.svc'], now: NOW });
    expect(new X509Certificate(leaf.certPem).validToDate.getTime()).toBe(NOW.getTime() + 10 * DAY);
    await expect(
      issueNodeCertificate(shortCa, { commonName: 'n', dnsNames: ['n'], now: new Date(NOW.getTime() + 11 * DAY) }),
    ).rejects.toThrow(/expired/);
  });

  it('refuses a CA that is not a CA, a mismatched key, bad names', async () => {
    const other = await createClusterCa({ commonName: 'other', now: NOW });
    const opts = { commonName: 'n', dnsNames: ['n.ns.svc'], now: NOW };
    await expect(issueNodeCertificate(node, opts)).rejects.toThrow(/not a CA/);
    await expect(issueNodeCertificate({ certPem: ca.certPem, keyPem: other.keyPem }, opts)).rejects.toThrow(
      /does not match/,
    );
    await expect(issueNodeCertificate({ certPem: 'nope', keyPem: ca.keyPem }, opts)).rejects.toBeInstanceOf(PkiError);
    await expect(issueNodeCertificate({ certPem: ca.certPem, keyPem: 'nope' }, opts)).rejects.toBeInstanceOf(PkiError);
    for (const dnsNames of [[], ['bad name'], ['-x.svc'], ['a..b'], ['x'.repeat(300)]])
      await expect(issueNodeCertificate(ca, { ...opts, dnsNames })).rejects.toBeInstanceOf(PkiError);
  });
});

describe('certificateNeedsRenewal', () => {
  const at = (days: number) => new Date(NOW.getTime() + days * DAY);

  it('not before the last third of the lifetime; yes within it and after expiry', () => {
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES })).toBe(false);
    expect(certificateNeedsRenewal(node.certPem, { now: at(59), dnsNames: NAMES })).toBe(false);
    expect(certificateNeedsRenewal(node.certPem, { now: at(61), dnsNames: NAMES })).toBe(true);
    expect(certificateNeedsRenewal(node.certPem, { now: at(200), dnsNames: NAMES })).toBe(true);
    expect(certificateNeedsRenewal(node.certPem, { now: at(-1), dnsNames: NAMES })).toBe(true);
  });

  it('SANs compared as sets (order, case, duplicates do not matter)', () => {
    const same = [...NAMES].reverse().map((n) => n.toUpperCase());
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: [...same, NAMES[0] as string] })).toBe(false);
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES.slice(1) })).toBe(true);
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: [...NAMES, 'extra.svc'] })).toBe(true);
  });

  it('a certificate for one side only (serverAuth without clientAuth) needs renewal', async () => {
    const caCert = new x509.X509Certificate(ca.certPem);
    const issuerKey = createPrivateKey(ca.keyPem).toCryptoKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
    const keys = await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    const serverOnly = await x509.X509CertificateGenerator.create(
      {
        subject: 'CN=server-only',
        issuer: caCert.subject,
        notBefore: new Date(NOW.getTime() - DAY),
        notAfter: new Date(NOW.getTime() + 90 * DAY),
        signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
        publicKey: keys.publicKey,
        signingKey: issuerKey,
        extensions: [
          new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
          new x509.SubjectAlternativeNameExtension(
            NAMES.map((n) => ({ type: n.includes(':') || /^\d/.test(n) ? 'ip' : 'dns', value: n })),
          ),
        ],
      },
      webcrypto,
    );
    const pem = serverOnly.toString('pem');
    expect(certificateNeedsRenewal(pem, { now: NOW, dnsNames: NAMES, caPem: ca.certPem })).toBe(true);
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES, caPem: ca.certPem })).toBe(false);
  });

  it('IPv6 SANs compare in any notation', async () => {
    const v6 = ['::1', 'fd00::10', 'ledger.ns.svc'];
    const leaf = await issueNodeCertificate(ca, { commonName: 'v6', dnsNames: v6, now: NOW });
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.checkIP('::1')).toBe('::1');
    expect(cert.checkIP('fd00::10')).toBe('fd00::10');
    expect(certificateNeedsRenewal(leaf.certPem, { now: NOW, dnsNames: v6 })).toBe(false);
    expect(
      certificateNeedsRenewal(leaf.certPem, { now: NOW, dnsNames: ['0:0:0:0:0:0:0:1', 'FD00::0:10', 'ledger.ns.svc'] }),
    ).toBe(false);
    expect(certificateNeedsRenewal(leaf.certPem, { now: NOW, dnsNames: ['::2', 'fd00::10', 'ledger.ns.svc'] })).toBe(
      true,
    );
  });

  it('a certificate from another CA, or an unreadable one, needs renewal', async () => {
    const other = await createClusterCa({ commonName: 'other', now: NOW });
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES, caPem: ca.certPem })).toBe(false);
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES, caPem: other.certPem })).toBe(true);
    expect(certificateNeedsRenewal(node.certPem, { now: NOW, dnsNames: NAMES, caPem: 'junk' })).toBe(true);
    expect(certificateNeedsRenewal('junk', { now: NOW, dnsNames: NAMES })).toBe(true);
    expect(certificateNeedsRenewal('', { now: NOW, dnsNames: NAMES })).toBe(true);
  });
});
