// The commands of src/main.ts as an operator runs them: migrate, keys create, serve (refusing a database that is
// behind), probes, trigger worker|retention (exit code = result; retried while the API is not answering), a bad
// variable (one line naming it), SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@scriptorium/test-support';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrationsFolder } from '../src/db/index.ts';

const main = join(import.meta.dirname, '..', 'src', 'main.ts');
const SECRET = 'cli-worker-secret-0123456789abcdefghij';

function run(
  args: string[],
  env: Record<string, string>,
  onStderr?: (soFar: string) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [main, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      onStderr?.(stderr);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let db: TestDatabase;
let server: ChildProcess | null = null;
beforeAll(async () => {
  db = await createTestDatabase(inject('postgresUrl'), 'translation_cli');
});
afterAll(async () => {
  server?.kill('SIGKILL');
  await db?.drop();
});

describe('main.ts commands', () => {
  it('a bad variable exits 1 with one line naming it', async () => {
    const r = await run(['serve'], { DATABASE_URL: db.url, PORT: 'abc' });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^PORT: /);
    const w = await run(['serve'], { DATABASE_URL: db.url, WORKER_SECRET: 'short' });
    expect(w.stderr).toMatch(/^WORKER_SECRET: /);
  });

  it('serve refuses a database whose migrations are behind; migrate applies them (idempotent)', async () => {
    const refused = await run(['serve'], { DATABASE_URL: db.url, PORT: '0' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('migration(s) pending');
    const m1 = await run(['migrate'], { DATABASE_URL: db.url });
    expect(m1.code).toBe(0);
    // Every migration of the folder (its journal lists them).
    const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    expect(m1.stdout).toContain(`migrations applied: ${journal.entries.length}`);
    const m2 = await run(['migrate'], { DATABASE_URL: db.url });
    expect(m2.stdout).toContain('migrations applied: 0');
  });

  it('keys create prints the secret once; serve answers with it; trigger reflects the result; SIGTERM stops it', async () => {
    const keys = await run(['keys', 'create', '--user', 'ops@example.com'], { DATABASE_URL: db.url });
    expect(keys.code).toBe(0);
    const { apiKey, prefix, keyId } = JSON.parse(keys.stdout);
    expect(apiKey).toMatch(/^sk_live_[0-9A-Za-z]{43}$/);
    expect(apiKey.startsWith(prefix)).toBe(true);
    const notMember = await run(['keys', 'create', '--user', 'ops@example.com', '--org', 'no-such-org'], {
      DATABASE_URL: db.url,
    });
    expect(notMember.code).toBe(1);

    const port = await freePort();
    const env = {
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKER_SECRET: SECRET,
      LOG_LEVEL: 'warn',
    };
    server = spawn(process.execPath, [main, 'serve'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: 'ignore',
    });
    const base = `http://127.0.0.1:${port}`;
    let ready = false;
    for (let i = 0; i < 100 && !ready; i++) {
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready).toBe(true);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('scriptorium_translation_http_requests_total');
    const t = await fetch(`${base}/api/v1/translate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sourceLocale: 'en',
        targetLocale: 'de',
        tier: 'cheap',
        items: [{ id: 'a', text: 'Hi' }],
        style: {},
        glossary: [],
      }),
    });
    expect(t.status).toBe(200);
    // keys revoke from another process: the serving process (key cached) refuses the key within its check interval.
    const revoke = await run(['keys', 'revoke', '--key-id', keyId], { DATABASE_URL: db.url });
    expect(revoke.code).toBe(0);
    expect(JSON.parse(revoke.stdout)).toEqual({ keyId, revoked: true });
    let status = 200;
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (
        await fetch(`${base}/api/v1/translate`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } })
      ).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);

    const ok = await run(['trigger', 'worker'], { TRANSLATION_URL: base, WORKER_SECRET: SECRET });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ processed: expect.any(Number), failed: 0 });
    const ret = await run(['trigger', 'retention'], { TRANSLATION_URL: base, WORKER_SECRET: SECRET });
    expect(ret.code).toBe(0);
    expect(JSON.parse(ret.stdout).deleted).toBeDefined();
    const bad = await run(['trigger', 'worker'], { TRANSLATION_URL: base, WORKER_SECRET: `${SECRET}-wrong` });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('HTTP 401');

    const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    server = null;
  });

  it('trigger rides out an API that is not answering yet, as in a rollout: refused, then the answer', async () => {
    // The API is started first and waited for (its start-up time under load is not what this tests); the address
    // the trigger calls refuses connections until the trigger has said so, then forwards to the API, as a Service
    // does once its new pod is ready.
    const apiPort = await freePort();
    server = spawn(process.execPath, [main, 'serve'], {
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: db.url,
        PORT: String(apiPort),
        HOST: '127.0.0.1',
        WORKER_SECRET: SECRET,
        LOG_LEVEL: 'warn',
      },
      stdio: 'ignore',
    });
    let ready = false;
    for (let i = 0; i < 300 && !ready; i++) {
      ready = await fetch(`http://127.0.0.1:${apiPort}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready).toBe(true);
    const port = await freePort();
    let forwarder: Server | null = null;
    const triggered = run(
      ['trigger', 'retention'],
      { TRANSLATION_URL: `http://127.0.0.1:${port}`, WORKER_SECRET: SECRET },
      (soFar) => {
        if (forwarder || !soFar.includes('ECONNREFUSED')) return;
        forwarder = createServer((client) => {
          const upstream = connect(apiPort, '127.0.0.1');
          client.pipe(upstream).pipe(client);
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
        }).listen(port, '127.0.0.1');
      },
    );
    const r = await triggered;
    (forwarder as Server | null)?.close();
    expect(r.stderr).toMatch(/^trigger retention: ECONNREFUSED; trying again in 1 s$/m);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).deleted).toBeDefined();
    expect(r.stderr).not.toContain(SECRET);
    server.kill('SIGKILL');
    server = null;
  });
});
