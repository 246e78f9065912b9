// `make dev`'s translation entry (src/dev/translation.ts): starts on PGlite with the pseudo provider and a local
// GitHub-compatible OAuth server, and prints one story a newcomer follows with curl: the printed key of the test
// user's organization translates; the printed sign-in signs the test user in; they see that organization with the
// key's usage, issue a key, invite a member, enroll and verify MFA, export and delete their data. Every line runs as printed (bash, curl).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, describe, expect, it } from 'vitest';

let child: ChildProcess | null = null;
const dir = mkdtempSync(join(tmpdir(), 'translation-dev-'));
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const run = promisify(execFile);

describe('src/dev/translation.ts', () => {
  it('prints a story that works as printed: the test user’s key, sign-in, organization, usage and the account path', async () => {
    const port = await freePort();
    child = spawn(process.execPath, [join(import.meta.dirname, '..', 'src', 'dev', 'translation.ts')], {
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
    while (!out.includes('  delete: ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));

    /** The command printed after `  <label>…: `. */
    const line = (label: string): string => {
      const found = out.split('\n').find((l) => l.startsWith(`  ${label}`));
      expect(found, `a printed "${label}" line`).toBeDefined();
      return found!.slice(found!.indexOf(': ') + 2);
    };
    /** Runs a printed line as a newcomer's shell does, in a folder of its own; its output as JSON. */
    const sh = async (command: string) => {
      const { stdout } = await run('bash', ['-c', command], { cwd: dir, timeout: 30_000 });
      return stdout.trim() ? JSON.parse(stdout) : null;
    };

    const story = /test user (\S+) \((\S+)\) owns the organization "dev" \(([0-9a-f-]{36})\)/.exec(out);
    expect(story).not.toBeNull();
    const [, login, email, orgId] = story!;
    expect(login).toBe('octo-dev');
    expect(out).toMatch(new RegExp(`local GitHub OAuth server on http://127\\.0\\.0\\.1:\\d+ — sign in as ${login}:`));
    const apiKey = /API key of "dev" \(shown once\): (sk_live_[0-9A-Za-z]{43})/.exec(out)?.[1];
    expect(apiKey).toBeDefined();

    // The printed key translates.
    expect(line('try')).toContain(apiKey!);
    const translated = await sh(line('try'));
    expect(translated.translations[0].text).toContain('{name}');
    expect(translated.issues).toEqual([]);

    // The printed sign-in: a development session cookie (not Secure: plain http on loopback) in the printed jar.
    await sh(line('sign-in'));
    const jar = /the session cookie goes to (\S+)\)/.exec(out)![1]!;
    const cookie = readFileSync(jar, 'utf8')
      .split('\n')
      .find((l) => l.includes('\tsession-token\t'));
    expect(cookie?.split('\t')[3]).toBe('FALSE');

    // The signed-in test user sees the organization the printed key belongs to, and the key's usage in it.
    const me = await sh(line('you and your organizations'));
    expect(me.email).toBe(email);
    expect(me.organizations).toEqual([expect.objectContaining({ id: orgId, name: 'dev', role: 'owner' })]);
    const usage = await sh(line('usage of "dev"'));
    expect(usage.days).toEqual([
      expect.objectContaining({ kind: 'translate', requests: 1, tokensIn: translated.tokensIn }),
    ]);
    expect(usage.quota.used).toBe(translated.tokensIn + translated.tokensOut);

    // The rest of the newcomer's path, each line as printed.
    const issued = await sh(line('issue a key'));
    expect(issued).toMatchObject({ apiKey: expect.stringMatching(/^sk_live_/), orgId });
    const invite = await sh(line('invite'));
    expect(invite).toMatchObject({
      email: 'ana@example.com',
      role: 'member',
      acceptUrl: expect.stringContaining('?invite='),
    });
    const { secret } = await sh(line('enroll MFA'));
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(line('verify MFA')).toContain('SECRET');
    expect(await sh(line('verify MFA').replace('SECRET', secret))).toMatchObject({ enabled: true });
    await sh(line('export'));
    const bundle = JSON.parse(readFileSync(join(dir, 'scriptorium-export.json'), 'utf8'));
    expect(bundle.profile).toMatchObject({ email, githubId: expect.any(String) });
    expect(bundle.apiKeys.length).toBe(2);
    const erased = await sh(line('delete'));
    expect(erased).toMatchObject({ deleted: true, plan: { deletedOrganizations: [orgId] } });
    // Erased: the printed key no longer translates, the session no longer signs in.
    expect(await sh(line('try'))).toEqual({ error: 'missing or invalid credentials' });
    expect(await sh(line('you and your organizations'))).toEqual({ error: 'missing or invalid credentials' });

    const exited = new Promise((resolve) => child!.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    child = null;
  });
});
