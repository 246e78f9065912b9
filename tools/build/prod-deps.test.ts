import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { productionClosure, pruneToClosure } from './prod-deps.ts';

const repo = join(import.meta.dirname, '..', '..');
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function pkg(dir: string, manifest: object) {
  mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, dir, 'package.json'), JSON.stringify(manifest));
}
function link(path: string, target: string) {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  symlinkSync(target, join(root, path));
}

/**
 * An install as `npm ci --omit=dev --workspace packages/app` leaves it (npm/cli issue 6670): the app's
 * devDependency `@s/dev`, a workspace package, installed with its own dependency `d`.
 */
function fixture() {
  root = mkdtempSync(join(tmpdir(), 'prod-deps-'));
  pkg('.', { name: 'root', workspaces: ['packages/*'] });
  pkg('packages/app', {
    name: 'app',
    dependencies: { a: '1', '@s/w': '1' },
    devDependencies: { '@s/dev': '1', c: '1' },
  });
  pkg('packages/w', { name: '@s/w', dependencies: { b: '1' } });
  pkg('packages/dev', { name: '@s/dev', dependencies: { d: '1' } });
  pkg('packages/app/node_modules/h', { name: 'h' }); // the app's own unhoisted copy of nothing it needs
  link('node_modules/@s/w', '../../packages/w');
  link('node_modules/@s/dev', '../../packages/dev');
  pkg('node_modules/a', {
    name: 'a',
    dependencies: { g: '2' },
    optionalDependencies: { missing: '1' },
    peerDependencies: { e: '1', f: '1' },
    peerDependenciesMeta: { f: { optional: true } },
  });
  pkg('node_modules/a/node_modules/g', { name: 'g', version: '2' });
  pkg('node_modules/g', { name: 'g', version: '1' }); // only c's
  pkg('node_modules/b', { name: 'b' });
  pkg('node_modules/c', { name: 'c', dependencies: { g: '1' } });
  pkg('node_modules/d', { name: 'd' });
  pkg('node_modules/e', { name: 'e' });
  pkg('node_modules/f', { name: 'f' });
  link('node_modules/.bin/a', '../a/package.json');
  link('node_modules/.bin/c', '../c/package.json');
  writeFileSync(join(root, 'node_modules/.package-lock.json'), '{}');
}

describe('prod-deps: a workspace pruned to its production closure', () => {
  it('keeps what Node resolves from its dependencies, removes dev packages and what only they brought', () => {
    fixture();
    const removed = pruneToClosure(root, 'packages/app');
    expect(removed.sort()).toEqual(
      [
        'node_modules/@s/dev',
        'node_modules/c',
        'node_modules/d',
        'node_modules/f',
        'node_modules/g',
        'packages/app/node_modules/h',
      ].sort(),
    );
    // The nested copy a resolves first, the workspace link and its dependency, a required peer.
    for (const kept of ['node_modules/a/node_modules/g', 'node_modules/@s/w', 'node_modules/b', 'node_modules/e'])
      expect(existsSync(join(root, kept)), kept).toBe(true);
    expect(readdirSync(join(root, 'node_modules/.bin'))).toEqual(['a']);
    expect(existsSync(join(root, 'node_modules/.package-lock.json'))).toBe(false);
    // Pruning again finds nothing more to remove.
    expect(pruneToClosure(root, 'packages/app')).toEqual([]);
  });

  it('refuses an install that lacks a required dependency, naming it', () => {
    fixture();
    rmSync(join(root, 'node_modules/b'), { recursive: true });
    expect(() => productionClosure(root, 'packages/app')).toThrow('@s/w needs b, which is not installed');
  });

  // The repository's own install (development dependencies included): each product's closure holds its runtime
  // dependencies and no test scaffolding, and the workspace packages it reaches are the ones its Dockerfile copies.
  it.each([
    ['services/ledger-node', 'fastify'],
    ['services/translation', 'drizzle-orm'],
    ['operator', '@kubernetes/client-node'],
  ])('%s: runtime dependencies in, test scaffolding out', (workspace, runtime) => {
    const names = [...productionClosure(repo, workspace).entries].map((e) => e.replace(/^.*node_modules\//, ''));
    expect(names).toContain(runtime);
    for (const scaffolding of [
      'playwright-core',
      'testcontainers',
      'vitest',
      '@scriptorium/harness',
      '@scriptorium/test-support',
      '@scriptorium/kube-testenv',
    ])
      expect(names).not.toContain(scaffolding);
  });
});
