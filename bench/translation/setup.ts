// The translation service as bench/translation runs it, for that bench and bench/peers: the seeded organization,
// the service's settings against the fake OpenAI-compatible upstream, its replicas, the request, and the autocannon
// load generator (load.ts) in its own process; with the /proc readings the bench reports.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FAKE_API_KEY } from '@scriptorium/harness/translation-fakes';
import { createOrganization, ensureUser, issueApiKey, migrate, openDatabase } from '@scriptorium/translation';
import { postmasterOf } from '../proc-cpu.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');

export interface Load {
  requestsPerSecond: number;
  total: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  cpuMs: number;
}

/** autocannon (load.ts) in its own process with `opts` (url, method, headers, body, connections, duration…). */
export async function load(opts: Record<string, unknown>): Promise<Load> {
  const { stdout } = await run(process.execPath, [join(import.meta.dirname, 'load.ts'), JSON.stringify(opts)], {
    maxBuffer: 1 << 20,
    timeout: (Number(opts.duration ?? 10) + 60) * 1000,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!) as Load;
}

/** Busy and total CPU seconds of the whole machine so far (all cores, from /proc/stat). */
export function machineCpuSeconds(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const t = ticks.map(Number);
  const total = t.reduce((a, b) => a + b, 0);
  const idle = (t[3] ?? 0) + (t[4] ?? 0); // idle + iowait
  return { busy: (total - idle) / 100, total: total / 100 };
}

/** Listening TCP sockets on 127.0.0.1:`port` (IPv4, from /proc/net/tcp). */
export function listeners(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === local && f[3] === '0A';
    }).length;
}

export function rssMiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: Math.round(kib('VmRSS') / 1024), peak: Math.round(kib('VmHWM') / 1024) };
}

/** The pid of the PostgreSQL postmaster serving `databaseUrl` (the parent of a backend, read while it lives). */
export async function postmasterOfDatabase(databaseUrl: string): Promise<number> {
  const probe = await openDatabase(databaseUrl);
  try {
    const [backend] = await probe.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return postmasterOf(backend!.pid);
  } finally {
    await probe.close();
  }
}

/** Migrates the database and seeds one organization with room for the whole run; returns its API key. */
export async function seedBenchOrganization(databaseUrl: string): Promise<string> {
  const database = await openDatabase(databaseUrl);
  try {
    await migrate(database);
    const userId = await ensureUser(database, 'bench@example.com');
    const orgId = await createOrganization(database, { name: 'bench', planId: 'enterprise', ownerId: userId });
    await database.query('UPDATE plans SET quota_tokens = 1e15 WHERE id = $1', ['enterprise']);
    await database.query('UPDATE organizations SET daily_budget_micros = 1e15 WHERE id = $1', [orgId]);
    const { apiKey } = await issueApiKey(database, { userId, orgId, defaultPlan: 'enterprise', actor: 'operator' });
    return apiKey;
  } finally {
    await database.close();
  }
}

/** The request: 10 strings, a style and a glossary entry. */
export const TRANSLATE_BODY = JSON.stringify({
  sourceLocale: 'en',
  targetLocale: 'de',
  tier: 'cheap',
  items: Array.from({ length: 10 }, (_, i) => ({
    id: `string-${i}`,
    text: `Your changes to {project} were saved ${i} minutes ago. <b>Undo</b>`,
  })),
  style: { tone: 'friendly' },
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
});

/** The service's settings: real metering on `databaseUrl`, the upstream at `upstreamUrl`, no rate limit. */
export function serviceEnv(opts: { databaseUrl: string; port: number; upstreamUrl: string }): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: opts.databaseUrl,
    DATABASE__POOL_MAX: '20',
    PORT: String(opts.port),
    HOST: '127.0.0.1',
    REUSE_PORT: 'true',
    WORKER_SECRET: 'bench-worker-secret-0123456789abcdef',
    PROVIDER__KIND: 'openai',
    PROVIDER__BASE_URL: opts.upstreamUrl,
    PROVIDER__API_KEY: FAKE_API_KEY,
    RATE_LIMITS: JSON.stringify([{ route: '/api/v1/translate', requestsPerMinute: 100_000_000 }]),
    LOG_LEVEL: 'info',
    // Experiments: SERVICE_ENV='{"LOG_LEVEL":"warn"}' overrides any of the above.
    ...(JSON.parse(process.env.SERVICE_ENV ?? '{}') as Record<string, string>),
  };
}

/**
 * Starts `replicas` service processes sharing `port` (REUSE_PORT) and waits for each to listen and for /readyz.
 * `nodeArgs`: node's own flags (--inspect, --cpu-prof). The caller kills them.
 */
export async function startReplicas(opts: {
  env: Record<string, string>;
  port: number;
  replicas: number;
  nodeArgs?: string[];
}): Promise<ChildProcess[]> {
  const services: ChildProcess[] = [];
  try {
    for (let r = 0; r < opts.replicas; r++) {
      const child = spawn(
        process.execPath,
        [...(opts.nodeArgs ?? []), join(root, 'services/translation/src/main.ts'), 'serve'],
        {
          env: opts.env,
          // SERVICE_LOG=<file>: keep the replicas' log lines for a look after the run (else /dev/null, as in
          // production a log shipper would read them outside the service).
          stdio: ['ignore', process.env.SERVICE_LOG ? openSync(process.env.SERVICE_LOG, 'a') : 'ignore', 'inherit'],
        },
      );
      services.push(child);
      // A replica is up when the port has one more listening socket (each REUSE_PORT process has its own).
      for (let i = 0; listeners(opts.port) <= r; i++) {
        if (i >= 300 || child.exitCode !== null) throw new Error(`replica ${r} did not listen within 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    for (let i = 0; i < 150; i++) {
      const ready = await fetch(`http://127.0.0.1:${opts.port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } catch (err) {
    for (const child of services) child.kill('SIGTERM');
    throw err;
  }
  return services;
}
