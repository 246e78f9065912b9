// `make dev`'s entry (src/dev.ts): starts on PGlite with the pseudo provider, prints an API key and a curl line,
// and the printed request works.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support';
import { afterAll, describe, expect, it } from 'vitest';

let child: ChildProcess | null = null;
const dir = mkdtempSync(join(tmpdir(), 'translation-dev-'));
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('src/dev.ts', () => {
  it('prints an API key and a curl line that works', async () => {
    const port = await freePort();
    child = spawn(process.execPath, [join(import.meta.dirname, '..', 'src', 'dev.ts')], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        TRANSLATION_DEV_DIR: join(dir, 'pg'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const deadline = Date.now() + 90_000;
    while (!out.includes('try: curl') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const line = out.split('\n').find((l) => l.includes('try: curl'));
    expect(line).toBeDefined();
    const apiKey = /Bearer (sk_live_[0-9A-Za-z]{43})/.exec(line!)?.[1];
    const url = /curl -s (\S+)/.exec(line!)?.[1];
    const body = /-d '(.+)'$/.exec(line!)?.[1];
    expect(apiKey && url && body).toBeTruthy();
    const res = await fetch(url!, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: body!,
    });
    expect(res.status).toBe(200);
    const result = (await res.json()) as { translations: { id: string; text: string }[]; issues: unknown[] };
    expect(result.translations[0]!.text).toContain('{name}');
    expect(result.issues).toEqual([]);

    // The printed sign-in through the local OAuth server, then a key issued with the session.
    expect(out).toMatch(/local GitHub OAuth server on http:\/\/127\.0\.0\.1:\d+ — test user: octo-dev/);
    const base = new URL(url!).origin;
    const start = await fetch(`${base}/auth/github`, { redirect: 'manual' });
    const flow = start.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const approved = await fetch(`${start.headers.get('location')}&login=octo-dev`, { redirect: 'manual' });
    const back = await fetch(approved.headers.get('location')!, { redirect: 'manual', headers: { cookie: flow } });
    expect(back.status).toBe(302);
    const session = back.headers.getSetCookie().find((c) => c.startsWith('session-token='))!;
    expect(session).not.toMatch(/Secure/); // development: plain http on loopback
    const issued = await fetch(`${base}/api/v1/keys`, { method: 'POST', headers: { cookie: session.split(';')[0]! } });
    expect(issued.status).toBe(200);
    expect(((await issued.json()) as { apiKey: string }).apiKey).toMatch(/^sk_live_/);
    const exited = new Promise((resolve) => child!.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    child = null;
  });
});
