import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@scriptorium/test-support/ports';
import pg from 'pg';

const run = promisify(execFile);

/** A PostgreSQL server for tests, and how to stop it. */
export interface TestPostgres {
  /** Connection string of the `postgres` database, as the superuser. */
  readonly url: string;
  /** Where it came from: `env` (TEST_DATABASE_URL), `local` (initdb here) or `container`. */
  readonly source: 'env' | 'local' | 'container';
  stop(): Promise<void>;
}

/**
 * Starts (or finds) a real PostgreSQL for integration tests.
 *
 * Order: `TEST_DATABASE_URL` when set; else the machine's PostgreSQL binaries
 * (`initdb` into a temporary folder, `postgres` on a free loopback port); else a
 * testcontainers PostgreSQL when a Docker engine answers. Throws a clear error
 * when none of them is possible.
 *
 * @example
 *   const pgServer = await startTestPostgres();
 *   const db = await createTestDatabase(pgServer.url);
 *   // ... use db.url ...
 *   await db.drop(); await pgServer.stop();
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  const fromEnv = process.env.TEST_DATABASE_URL;
  if (fromEnv) return { url: fromEnv, source: 'env', stop: async () => {} };

  const bin = findPostgresBinaries();
  if (bin) return startLocalPostgres(bin);

  if (await dockerAnswers()) return startContainerPostgres();

  throw new Error(
    'No PostgreSQL for integration tests: set TEST_DATABASE_URL, install the `postgresql` ' +
      'Debian package (binaries under /usr/lib/postgresql/*/bin), or run a Docker engine.',
  );
}

/** The newest `/usr/lib/postgresql/<version>/bin` that holds initdb, or null. */
export function findPostgresBinaries(root = '/usr/lib/postgresql'): string | null {
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

/** Options of a PostgreSQL cluster of its own (initdb in a temporary folder, on a free loopback port). */
export interface LocalPostgresOptions {
  /** Extra `-c name=value` server settings. */
  settings?: Record<string, string>;
}

/**
 * A PostgreSQL cluster of its own: initdb into a temporary folder (as the `postgres` user when running as root,
 * who must own it), then `postgres` on a free loopback port, trusting local connections. Each caller gets its own
 * cluster (a Scorpio broker needs one per broker: it names a tenant's database after the tenant alone).
 * @example const pgCluster = await startLocalPostgres(findPostgresBinaries() as string);
 */
export async function startLocalPostgres(bin: string, options: LocalPostgresOptions = {}): Promise<TestPostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'scriptorium-pg-'));
  const data = join(dir, 'data');
  // initdb and postgres refuse to run as root: run them as the `postgres` user, who must own the folder.
  const asPostgres = (cmd: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args);
  if (asRoot) {
    const ids = postgresUserIds();
    chownSync(dir, ids.uid, ids.gid);
  }
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    // Test data is disposable: trade durability for speed.
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: '400',
    ...options.settings,
  };
  const serverOptions = [`-p ${port}`, `-k ${dir}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(
    ' ',
  );
  await asPostgres('pg_ctl', [
    '-D',
    data,
    '-o',
    serverOptions,
    '-l',
    join(dir, 'server.log'),
    '-w',
    '-t',
    '60',
    'start',
  ]);
  // Never outlives the test process: its postmaster gets SIGQUIT (an immediate shutdown) when this process exits.
  const reap = () => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGQUIT');
    } catch {
      // already stopped
    }
  };
  process.once('exit', reap);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    source: 'local',
    async stop() {
      process.off('exit', reap);
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUserIds(): { uid: number; gid: number } {
  const out = spawnSync('id', ['postgres'], { encoding: 'utf8' });
  const uid = /uid=(\d+)/.exec(out.stdout)?.[1];
  const gid = /gid=(\d+)/.exec(out.stdout)?.[1];
  if (!uid || !gid) throw new Error('Running as root, but there is no `postgres` user to run initdb as.');
  return { uid: Number(uid), gid: Number(gid) };
}

async function dockerAnswers(): Promise<boolean> {
  try {
    await run('docker', ['info'], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

async function startContainerPostgres(): Promise<TestPostgres> {
  // Loaded lazily: testcontainers is only needed where a Docker engine answers.
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:16-alpine').start();
  return { url: container.getConnectionUri(), source: 'container', stop: async () => void (await container.stop()) };
}

/** A fresh, uniquely named database on the server at `serverUrl`. */
export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** Creates an empty database, so each test file works in isolation on one server. */
export async function createTestDatabase(serverUrl: string, prefix = 'test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
