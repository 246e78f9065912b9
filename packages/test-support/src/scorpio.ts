// A real FIWARE Scorpio (NGSI-LD broker) for integration tests and benchmarks: the all-in-one runner that
// tools/scorpio/build.sh builds into the cache outside the repository, on its own PostgreSQL cluster (with PostGIS)
// and a free loopback port, with every URL it uses to call itself pointed at that port.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support/ports';
import pg from 'pg';
import { findPostgresBinaries, startLocalPostgres, type TestPostgres } from './postgres.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BUILD = join(ROOT, 'tools', 'scorpio', 'build.sh');

/** The built jar, or why there is none (and cannot be one here). */
export type ScorpioJar = { jar: string } | { skip: string };

/** The jar when tools/scorpio/build.sh has built it with its current key; undefined otherwise. */
export function builtScorpioJar(): string | undefined {
  const res = spawnSync('bash', [BUILD, '--check'], { encoding: 'utf8' });
  const jar = res.stdout.trim();
  return res.status === 0 && jar && existsSync(jar) ? jar : undefined;
}

/** Why Scorpio cannot be built on this machine, or undefined when it can. */
export function scorpioUnbuildable(): string | undefined {
  for (const [cmd, what] of [
    ['java', 'Java 17'],
    ['mvn', 'Maven'],
  ] as const)
    if (spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0) return `no ${what} (\`${cmd}\`) on PATH to build it`;
  if (!findPostgresBinaries()) return 'no PostgreSQL binaries to run it on';
  const missing = spawnSync('bash', [BUILD, '--check'], { encoding: 'utf8' }).stderr;
  if (/source tarball .* is not found/.test(missing)) return missing.trim();
  return undefined;
}

/**
 * The Scorpio jar for a test: the built one; else it is built now (`make test` builds it first, so this happens
 * only when a test file runs alone on a machine that never built it: about 10 minutes); else, when it cannot be
 * built here, the reason, which the caller reports as a skip.
 */
export function ensureScorpioJar(): ScorpioJar {
  const built = builtScorpioJar();
  if (built) return { jar: built };
  const why = scorpioUnbuildable();
  if (why) return { skip: `Scorpio is not built and cannot be built here: ${why}` };
  const jar = execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return { jar };
}

export interface ScorpioOptions {
  /** The runnable jar (ensureScorpioJar). */
  jar: string;
  /** Java heap cap (default 768 MB). */
  maxHeapMb?: number;
  /** Extra `-Dname=value` properties. */
  properties?: Record<string, string>;
  /**
   * `test` (the default): the JVM settings of a broker that lives for one test file (TEST_JVM_FLAGS); `default`: the
   * JVM's own, for a benchmark that measures Scorpio as it would run in production.
   */
  jvm?: 'test' | 'default';
}

/**
 * A test broker lives for a minute or two: the client compiler only (no C2, whose compilations were half the CPU of
 * the Scorpio watch suite: 92 core-seconds with the JVM's defaults, 53 with these, the suite no slower) and the
 * serial collector (no parallel GC threads on a 2-core machine shared with the other test files).
 */
export const TEST_JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

export interface TestScorpio {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly port: number;
  /** Its PostgreSQL cluster (superuser connection string). */
  readonly postgres: TestPostgres;
  /** The Java process's id (for RSS and CPU readings). */
  readonly pid: number | undefined;
  /** Where its output goes. */
  readonly logFile: string;
  /**
   * Stops the Java process and starts it again on the same port and database; `whileDown` runs in between (a test
   * that wants a broker that forgot its subscriptions deletes them then: Scorpio keeps them in its database).
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
  /** Stops the Java process and its PostgreSQL cluster. */
  stop(): Promise<void>;
}

async function prepareDatabase(serverUrl: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    // Scorpio's migrations create the PostGIS extension: its role is a superuser (a test cluster of its own).
    await c.query(`CREATE ROLE ngb LOGIN SUPERUSER PASSWORD 'ngb'`);
    await c.query('CREATE DATABASE ngb OWNER ngb');
  } finally {
    await c.end();
  }
}

/** The `-D` properties that point Scorpio at its database and at itself. */
export function scorpioProperties(port: number, db: { host: string; port: number }): Record<string, string> {
  const self = `http://127.0.0.1:${port}`;
  return {
    'quarkus.profile': 'in-memory',
    'quarkus.http.port': String(port),
    'quarkus.http.host': '127.0.0.1',
    dbhost: db.host,
    dbport: String(db.port),
    dbuser: 'ngb',
    dbpass: 'ngb',
    dbname: 'ngb',
    // Every URL it calls itself on defaults to localhost:9090.
    'gateway.host': '127.0.0.1',
    'gateway.port': String(port),
    'scorpio.gatewayurl': self,
    'atcontext.url': `${self}/ngsi-ld/v1/jsonldContexts/`,
    selfhostcorecontext: `${self}/corecontext`,
    'quarkus.rest-client.entity-service.url': self,
    'quarkus.rest-client.atcontext-service.url': self,
    'scorpio.entity-manager-server': self,
    'scorpio.at-context-server': self,
  };
}

/**
 * Starts Scorpio on its own PostgreSQL cluster and a free port, and resolves once it answers NGSI-LD queries.
 * @example
 *   const found = ensureScorpioJar();
 *   if ('jar' in found) { const scorpio = await startScorpio({ jar: found.jar }); … await scorpio.stop(); }
 */
export async function startScorpio(options: ScorpioOptions): Promise<TestScorpio> {
  const bin = findPostgresBinaries();
  if (!bin) throw new Error('Scorpio needs PostgreSQL: no binaries under /usr/lib/postgresql/*/bin');
  const postgres = await startLocalPostgres(bin);
  const dir = mkdtempSync(join(tmpdir(), 'scriptorium-scorpio-'));
  const logFile = join(dir, 'scorpio.log');
  let child: ChildProcess | undefined;
  let port = 0;
  try {
    await prepareDatabase(postgres.url);
    const dbPort = Number(new URL(postgres.url).port);
    port = await freePort();
    const properties = { ...scorpioProperties(port, { host: '127.0.0.1', port: dbPort }), ...options.properties };
    const args = [
      `-Xmx${options.maxHeapMb ?? 768}m`,
      ...(options.jvm === 'default' ? [] : TEST_JVM_FLAGS),
      ...Object.entries(properties).map(([k, v]) => `-D${k}=${v}`),
      '-jar',
      options.jar,
    ];
    const launch = async () => {
      for (let attempt = 1; ; attempt++) {
        const out = createWriteStream(logFile, { flags: 'a' });
        const started = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir });
        started.stdout?.pipe(out);
        started.stderr?.pipe(out);
        // Never outlives the test process (a file that failed before its clean-up left a broker running).
        const reap = () => started.kill('SIGKILL');
        process.once('exit', reap);
        started.once('exit', () => process.off('exit', reap));
        child = started;
        const outcome = await waitUntilReady(`http://127.0.0.1:${port}`, started, logFile);
        if (outcome === 'ready') return;
        // Scorpio's known startup hang (below): killed and started again, as a liveness probe would.
        started.kill('SIGKILL');
        await new Promise((r) => (started.exitCode !== null ? r(undefined) : started.once('exit', r)));
        if (attempt >= STARTUP_ATTEMPTS) {
          throw new Error(`Scorpio hung while starting, ${attempt} times in a row; log: ${logFile}`);
        }
        appendFileSync(
          logFile,
          `\n[test harness] Scorpio hung while starting (attempt ${attempt}): starting it again\n`,
        );
      }
    };
    await launch();
    const stopJava = async () => {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    };
    return {
      url: `http://127.0.0.1:${port}`,
      port,
      postgres,
      get pid() {
        return child?.pid;
      },
      logFile,
      async restart(whileDown) {
        await stopJava();
        await whileDown?.();
        await launch();
      },
      async stop() {
        await stopJava();
        await postgres.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await postgres.stop();
    throw err;
  }
}

/**
 * Deletes every subscription Scorpio holds, in every tenant (each tenant is a database of its own), as a broker
 * restored from a state without them would have none. Run it while Scorpio is down (`restart`).
 */
export async function forgetScorpioSubscriptions(serverUrl: string): Promise<number> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  let deleted = 0;
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE NOT datistemplate AND datname <> $1',
      ['postgres'],
    );
    for (const { datname } of rows) {
      const url = new URL(serverUrl);
      url.pathname = `/${datname}`;
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        const exists = await c.query("SELECT to_regclass('public.subscriptions') AS t");
        if (exists.rows[0]?.t) deleted += (await c.query('DELETE FROM subscriptions')).rowCount ?? 0;
      } finally {
        await c.end();
      }
    }
  } finally {
    await admin.end();
  }
  return deleted;
}

/** Starts of the Java process a launch tries when Scorpio hangs while starting. */
const STARTUP_ATTEMPTS = 3;
/**
 * Scorpio 5.0.3 can hang for good while starting, most often on a restart with subscriptions in its database: its
 * subscription manager loads them inside a bean's construction and waits on the Vert.x event loop it blocks (the
 * startup fix proposed upstream, ScorpioBroker pull request 662). Its own blocked-thread checker then logs, every
 * 2 s, an event-loop thread blocked in `SubscriptionService_Bean.get`; blocked that long, it never recovers.
 */
const HUNG_AFTER_MS = 20_000;
const HANG = /has been blocked for (\d+) ms[^\n]*\n(?:[^\n]*\n){0,40}?[^\n]*SubscriptionService_Bean\.get/g;

/** Whether the log shows the startup hang (HANG blocked for at least HUNG_AFTER_MS) after byte `from`. */
function hungSince(logFile: string, from: number): boolean {
  let text: string;
  try {
    text = readFileSync(logFile, 'latin1').slice(from);
  } catch {
    return false;
  }
  for (const m of text.matchAll(HANG)) if (Number(m[1]) >= HUNG_AFTER_MS) return true;
  return false;
}

/**
 * Polls until Scorpio answers an entity query (its migrations run first): `ready`, or `hung` when its log shows the
 * startup hang; fails with the log's path when it exits or answers nothing within the timeout.
 */
async function waitUntilReady(
  url: string,
  child: ChildProcess,
  logFile: string,
  timeoutMs = 180_000,
): Promise<'ready' | 'hung'> {
  const end = Date.now() + timeoutMs;
  const logFrom = statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`Scorpio exited (${code}) while starting; log: ${logFile}`))),
  );
  exited.catch(() => undefined);
  while (Date.now() < end) {
    if (child.exitCode !== null) await exited;
    try {
      const res = await fetch(`${url}/ngsi-ld/v1/types`, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 200) return 'ready';
    } catch {
      // not listening yet
    }
    if (hungSince(logFile, logFrom)) return 'hung';
    await new Promise((r) => setTimeout(r, 500));
  }
  child.kill('SIGKILL');
  throw new Error(`Scorpio did not answer within ${timeoutMs / 1000} s; log: ${logFile}`);
}
