// The translation service as the benchmarks run it: its own process (`main.ts serve`) on loopback, with the settings
// every benchmark needs (pseudo provider, development mode, sign-in configured so the session routes answer, the bench
// making its sessions itself) and the caller's own on top; resolved once `/readyz` answers.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const MAIN = join(import.meta.dirname, '..', 'services/translation/src/main.ts');

/** Rate limits high enough never to refuse a benchmark's requests on `routes`. */
export const unlimited = (routes: string[], requestsPerMinute = 1_000_000) =>
  JSON.stringify(routes.map((route) => ({ route, requestsPerMinute })));

/**
 * Starts the service on `port` against `databaseUrl`; `env` adds to or overrides the defaults. The caller stops it
 * with `stopService`.
 * @example const service = await startService({ databaseUrl, port, env: { RATE_LIMITS: unlimited(['/api/v1/me']) } });
 */
export async function startService(opts: {
  databaseUrl: string;
  port: number;
  env?: Record<string, string>;
  /** The service's entry point (default: this checkout's); another checkout's to compare with the code before. */
  main?: string;
  /** Node's own flags for the service (`--inspect=127.0.0.1:PORT`, `--cpu-prof`). */
  nodeArgs?: string[];
}): Promise<ChildProcess> {
  const base = `http://127.0.0.1:${opts.port}`;
  const service = spawn(process.execPath, [...(opts.nodeArgs ?? []), opts.main ?? MAIN, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: opts.databaseUrl,
      PORT: String(opts.port),
      HOST: '127.0.0.1',
      WORKER_SECRET: 'bench-worker-secret-0123456789abcdef',
      PROVIDER__KIND: 'pseudo',
      NODE_ENV: 'development',
      PUBLIC_BASE_URL: base,
      OAUTH__CLIENT_ID: 'bench',
      OAUTH__CLIENT_SECRET: 'bench-secret',
      LOG_LEVEL: 'warn',
      ...opts.env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return service;
    if (i >= 150 || service.exitCode !== null) {
      await stopService(service);
      throw new Error('the service did not become ready within 30 s');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** SIGTERM, then waits for the process to exit. */
export async function stopService(service: ChildProcess | undefined): Promise<void> {
  if (!service || service.exitCode !== null || service.signalCode !== null) return;
  const exited = new Promise((r) => service.once('exit', r));
  service.kill('SIGTERM');
  await exited;
}
