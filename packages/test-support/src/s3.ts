// A real S3-compatible server for tests: SeaweedFS's `weed mini` (master, volume, filer and S3 in one process),
// built from the Go module proxy by tools/kube/build.sh into the same cache folder as the control plane's binaries.
// Started on free ports with TLS from the caller's test CA and one identity with fresh random keys; the data lives
// in a temporary folder removed by `stop`.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@scriptorium/test-support/ports';
import { Agent, request } from 'undici';

export interface TestS3 {
  /** `https://127.0.0.1:<port>` */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The server's data and log folder. */
  dir: string;
  stop(): Promise<void>;
}

export interface TestS3Options {
  /** TLS: the server's certificate and key (SAN 127.0.0.1), and the CA that signed them. */
  tls: { certFile: string; keyFile: string; ca: Buffer };
  /** Buckets to create at start. */
  buckets?: string[];
}

/**
 * A throwaway CA and a server certificate for 127.0.0.1 (P-256, one day, openssl), written into `dir`: what
 * `startTestS3` serves and what its clients trust.
 */
export function createTestS3Tls(dir: string): TestS3Options['tls'] & { caFile: string } {
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ecKey, '-keyout', 's3-ca.key', '-out', 's3-ca.crt', '-days', '1', '-subj', '/CN=s3-ca']);
  openssl(['req', ...ecKey, '-keyout', 's3.key', '-out', 's3.csr', '-subj', '/CN=s3']);
  writeFileSync(join(dir, 's3.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl(
    ['x509', '-req', '-in', 's3.csr', '-CA', 's3-ca.crt', '-CAkey', 's3-ca.key', '-CAcreateserial'].concat([
      '-out',
      's3.crt',
      '-days',
      '1',
      '-extfile',
      's3.ext',
    ]),
  );
  return {
    certFile: join(dir, 's3.crt'),
    keyFile: join(dir, 's3.key'),
    caFile: join(dir, 's3-ca.crt'),
    ca: readFileSync(join(dir, 's3-ca.crt')),
  };
}

/** `weed`, where tools/kube/build.sh puts it (`SCRIPTORIUM_KUBE_BIN` overrides the folder). */
export function weedBinary(env: NodeJS.ProcessEnv = process.env): string {
  let dir = env.SCRIPTORIUM_KUBE_BIN;
  if (!dir) {
    const versions = readFileSync(fileURLToPath(new URL('../../../tools/kube/versions.env', import.meta.url)), 'utf8');
    const kube = /^KUBE_VERSION=(\S+)$/m.exec(versions)?.[1];
    const cache = env.SCRIPTORIUM_CACHE || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'scriptorium');
    dir = join(cache, 'kube', kube ?? 'unknown', 'bin');
  }
  const path = join(dir, 'weed');
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`test-support: weed (SeaweedFS) not found at ${path}. Run \`make kube-bins\`.`);
  }
  return path;
}

/** @example const s3 = await startTestS3({ tls: { certFile, keyFile, ca }, buckets: ['backups'] }) */
export async function startTestS3(options: TestS3Options): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), 'test-s3-'));
  mkdirSync(join(dir, 'data'));
  const accessKeyId = `AK${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  writeFileSync(
    join(dir, 's3.json'),
    JSON.stringify({
      identities: [
        {
          name: 'test',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
    { mode: 0o600 },
  );
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3, s3Grpc] = await Promise.all(
    Array.from({ length: 8 }, () => freePort()),
  );
  const args = [
    'mini',
    `-dir=${join(dir, 'data')}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    '-master.telemetry=false',
    '-master.volumeSizeLimitMB=64',
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(dir, 'filer.sock')}`,
    `-s3.port=${s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-s3.localSocket=${join(dir, 's3.sock')}`,
    `-s3.config=${join(dir, 's3.json')}`,
    `-s3.cert.file=${options.tls.certFile}`,
    `-s3.key.file=${options.tls.keyFile}`,
    '-webdav=false',
    '-admin.ui=false',
  ];
  if (options.buckets?.length) args.push(`-bucket=${options.buckets.join(',')}`);
  const log = createWriteStream(join(dir, 'weed.log'));
  const child: ChildProcess = spawn(weedBinary(), args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: dir },
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const reap = () => child.kill('SIGKILL');
  process.once('exit', reap);
  const endpoint = `https://127.0.0.1:${s3}`;
  const agent = new Agent({ connect: { ca: options.tls.ca } });
  const stop = async () => {
    process.off('exit', reap);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    await agent.close();
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when S3 answers over TLS and each bucket asked for exists (an anonymous HEAD is refused with 403, not 404).
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      const tail = readFileSync(join(dir, 'weed.log'), 'utf8').slice(-2000);
      await stop();
      throw new Error(`weed mini exited with ${child.exitCode}: ${tail}`);
    }
    try {
      const checks = await Promise.all(
        (options.buckets?.length ? options.buckets : ['']).map(async (b) => {
          const res = await request(`${endpoint}/${b}`, { method: 'HEAD', dispatcher: agent, headersTimeout: 2000 });
          await res.body.dump();
          return b === '' ? res.statusCode < 500 : res.statusCode === 403 || res.statusCode === 200;
        }),
      );
      if (checks.every(Boolean)) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`weed mini: S3 did not answer at ${endpoint} within 120 s (log: ${join(dir, 'weed.log')})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { endpoint, accessKeyId, secretAccessKey, dir, stop };
}
