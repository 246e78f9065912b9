// Nothing shipped carries the harness or a test: the product images copy no development or test path into their
// final stage, every image's build context drops *.test.ts, and no product package depends on a development or
// test package outside its devDependencies. `npm ci --omit=dev --workspace W` alone still installs W's workspace
// devDependencies and what they depend on (npm/cli issue 6670), so each deps stage then prunes node_modules to W's
// production closure (tools/build/prod-deps.ts).
// Imports are Biome's to check (the noRestrictedImports override for product sources in biome.json).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { productionClosure } from '../../tools/build/prod-deps.ts';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** The development and test packages: never in a product image, never a product's runtime dependency. */
const DEV_PACKAGES = ['harness', 'test-support', 'kube-testenv', 'github-oauth-local'];

const productDockerfiles = [
  'operator/Dockerfile',
  ...readdirSync(join(root, 'services'))
    .map((name) => `services/${name}/Dockerfile`)
    .filter((path) => existsSync(join(root, path))),
];

/** What a COPY or ADD line of the final stage takes: its sources, and the stage it takes them from (if any). */
function finalStageCopies(dockerfile: string): { from?: string; sources: string[]; line: string }[] {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  const last = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  return lines
    .slice(last + 1)
    .filter((l) => /^(COPY|ADD)\s/i.test(l))
    .map((line) => {
      const words = line.trim().split(/\s+/).slice(1);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { ...(from ? { from } : {}), sources: paths.slice(0, -1), line };
    });
}

const DEV_PATH = new RegExp(
  [
    ...DEV_PACKAGES.map((name) => `(^|/)packages/${name}(/|$)`),
    '(^|/)harness(/|$)',
    '(^|/)test(/|$)',
    'test-broker',
    'test-receivers',
    '\\.test\\.ts$',
    '(^|/)dev(-[a-z]+)?\\.ts$',
  ].join('|'),
);

describe('the product images', () => {
  it.each(productDockerfiles)('%s copies no development or test path into its final stage', (path) => {
    const copies = finalStageCopies(read(path));
    expect(copies.length).toBeGreaterThan(0);
    for (const { sources, line } of copies) {
      // The whole context (`.`) only ever goes into a build stage, never the final one.
      expect(sources, line).not.toContain('.');
      for (const source of sources) expect(source, line).not.toMatch(DEV_PATH);
    }
  });

  it.each(productDockerfiles)('%s removes the workspace links to packages it does not copy', (path) => {
    // npm ci links every workspace (the development and test packages too) into node_modules/@scriptorium.
    const lines = read(path).replace(/\\\n/g, ' ').split('\n');
    const last = lines.findLastIndex((l) => /^FROM\s/i.test(l));
    expect(lines.slice(last + 1)).toContain('RUN find node_modules/@scriptorium -xtype l -delete');
  });

  it.each(productDockerfiles)('%s prunes its deps stage to the production closure, which it copies', (path) => {
    const text = read(path).replace(/\\\n/g, ' ');
    const workspace = dirname(path);
    const install = text.split('\n').find((l) => /^RUN npm ci --omit=dev/.test(l));
    expect(install, `${path}: the deps stage's npm ci`).toBeDefined();
    expect(install).toContain(`node tools/build/prod-deps.ts ${workspace}`);
    // Every workspace package the closure reaches is in the final stage (else its link would dangle).
    const copied = finalStageCopies(read(path)).flatMap((c) => c.sources.map((s) => s.replace(/^\/app\//, '')));
    for (const entry of productionClosure(root, workspace).entries) {
      const name = /node_modules\/@scriptorium\/(.+)$/.exec(entry)?.[1];
      if (name) expect(copied, `${path} copies packages/${name}/src`).toContain(`packages/${name}/src`);
    }
  });

  it.each(productDockerfiles)("%s's build context drops *.test.ts", (path) => {
    // BuildKit reads <Dockerfile>.dockerignore beside the Dockerfile when there is one, else the root's.
    const own = `${path}.dockerignore`;
    const ignore = read(existsSync(join(root, own)) ? own : '.dockerignore');
    expect(ignore.split('\n').map((l) => l.trim())).toContain('**/*.test.ts');
  });
});

describe('the product packages', () => {
  const manifests = [
    'operator/package.json',
    ...readdirSync(join(root, 'services')).map((name) => `services/${name}/package.json`),
    ...readdirSync(join(root, 'packages'))
      .filter((name) => !DEV_PACKAGES.includes(name))
      .map((name) => `packages/${name}/package.json`),
  ].filter((path) => existsSync(join(root, path)));

  it.each(manifests)('%s lists no development or test package among its dependencies', (path) => {
    const manifest = JSON.parse(read(path)) as { dependencies?: Record<string, string>; exports?: object };
    const dependencies = Object.keys(manifest.dependencies ?? {});
    for (const name of DEV_PACKAGES) expect(dependencies, path).not.toContain(`@scriptorium/${name}`);
    // Nor does it export a test or development path of its own.
    for (const target of Object.values(manifest.exports ?? {}))
      expect(String(target), path).not.toMatch(/(^|\/)test(-[a-z]+)?\/|(^|\/)dev(-[a-z]+)?\.ts$/);
  });
});
