// Throwaway CA and certificates for the TLS tests, made with openssl in a temp folder (never committed).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestPki {
  caFile: string;
  ca: Buffer;
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  /** A certificate from a different CA (must be refused in mutual mode). */
  rogue: { cert: Buffer; key: Buffer };
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** openssl arguments for a fresh, unencrypted P-256 key. */
const NEW_EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function issue(dir: string, name: string, caName: string): void {
  openssl(['req', ...NEW_EC_KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`], dir);
  writeFileSync(
    join(dir, `${name}.ext`),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
  );
  openssl(
    [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${caName}.crt`,
      '-CAkey',
      `${caName}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ],
    dir,
  );
}

function makeCa(dir: string, name: string): void {
  openssl(
    [
      'req',
      '-x509',
      ...NEW_EC_KEY,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    ],
    dir,
  );
}

export function createTestPki(dir: string): TestPki {
  makeCa(dir, 'cluster-ca');
  issue(dir, 'node', 'cluster-ca');
  makeCa(dir, 'rogue-ca');
  issue(dir, 'rogue', 'rogue-ca');
  const read = (f: string) => readFileSync(join(dir, f));
  return {
    caFile: join(dir, 'cluster-ca.crt'),
    ca: read('cluster-ca.crt'),
    certFile: join(dir, 'node.crt'),
    keyFile: join(dir, 'node.key'),
    cert: read('node.crt'),
    key: read('node.key'),
    rogue: { cert: read('rogue.crt'), key: read('rogue.key') },
  };
}
