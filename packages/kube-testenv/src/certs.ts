import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** File paths of the PKI one test control plane uses. All keys are ECDSA P-256. */
export interface ControlPlanePki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  serviceAccountKey: string;
  serviceAccountPublicKey: string;
}

/** What one certificate says; rendered into an OpenSSL config by {@link certificateConfig}. */
export interface CertificateRequest {
  commonName: string;
  organization?: string;
  kind: 'ca' | 'server' | 'client';
  dnsNames?: string[];
  ipAddresses?: string[];
}

/**
 * The OpenSSL `req` config of one certificate: subject plus the v3 extensions Kubernetes checks
 * (CA flag, key usage, extended key usage, subject alternative names).
 *
 * @example certificateConfig({ commonName: 'admin', organization: 'system:masters', kind: 'client' })
 */
export function certificateConfig(request: CertificateRequest): string {
  const subject = [`CN = ${request.commonName}`];
  if (request.organization) subject.unshift(`O = ${request.organization}`);
  const ext =
    request.kind === 'ca'
      ? ['basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign,digitalSignature']
      : [
          'basicConstraints = critical,CA:FALSE',
          'keyUsage = critical,digitalSignature,keyEncipherment',
          `extendedKeyUsage = ${request.kind === 'server' ? 'serverAuth' : 'clientAuth'}`,
          'authorityKeyIdentifier = keyid',
        ];
  ext.push('subjectKeyIdentifier = hash');
  const sans = [
    ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(request.ipAddresses ?? []).map((ip) => `IP:${ip}`),
  ];
  if (sans.length > 0) ext.push(`subjectAltName = ${sans.join(',')}`);
  return [
    '[req]',
    'prompt = no',
    'distinguished_name = dn',
    'x509_extensions = ext',
    '[dn]',
    ...subject,
    '[ext]',
    ...ext,
    '',
  ].join('\n');
}

async function issue(dir: string, name: string, request: CertificateRequest, ca?: { cert: string; key: string }) {
  const config = join(dir, `${name}.cnf`);
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await writeFile(config, certificateConfig(request));
  const args = ['req', '-x509', '-new', '-config', config, '-days', '2', '-sha256'];
  args.push('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert);
  if (ca) args.push('-CA', ca.cert, '-CAkey', ca.key);
  await openssl(args);
  return { cert, key };
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { timeout: 30_000 });
  } catch (error) {
    const detail = error instanceof Error && 'stderr' in error ? String(error.stderr).trim() : String(error);
    throw new Error(`kube-testenv: openssl ${args[0]} failed (OpenSSL >= 3.0 is needed): ${detail}`);
  }
}

/**
 * Writes a fresh CA, the API server's serving certificate, client certificates for the admin
 * (group system:masters) and the controller manager, and the service-account signing key pair.
 * Uses the `openssl` command (OpenSSL 3), so no key material is produced by hand-written code.
 */
export async function generatePki(dir: string, serviceIp: string): Promise<ControlPlanePki> {
  const ca = await issue(dir, 'ca', { commonName: 'scriptorium-test-ca', kind: 'ca' });
  const [serving, admin, kcm] = await Promise.all([
    issue(
      dir,
      'apiserver',
      {
        commonName: 'kube-apiserver',
        kind: 'server',
        dnsNames: [
          'localhost',
          'kubernetes',
          'kubernetes.default',
          'kubernetes.default.svc',
          'kubernetes.default.svc.cluster.local',
        ],
        ipAddresses: ['127.0.0.1', serviceIp],
      },
      ca,
    ),
    issue(dir, 'admin', { commonName: 'scriptorium-test-admin', organization: 'system:masters', kind: 'client' }, ca),
    issue(dir, 'controller-manager', { commonName: 'system:kube-controller-manager', kind: 'client' }, ca),
  ]);
  const serviceAccountKey = join(dir, 'sa.key');
  const serviceAccountPublicKey = join(dir, 'sa.pub');
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', serviceAccountKey]);
  await openssl(['pkey', '-in', serviceAccountKey, '-pubout', '-out', serviceAccountPublicKey]);
  return {
    caCert: ca.cert,
    caKey: ca.key,
    servingCert: serving.cert,
    servingKey: serving.key,
    adminCert: admin.cert,
    adminKey: admin.key,
    controllerManagerCert: kcm.cert,
    controllerManagerKey: kcm.key,
    serviceAccountKey,
    serviceAccountPublicKey,
  };
}
