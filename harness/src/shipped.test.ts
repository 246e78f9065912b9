// Nothing shipped carries the harness or a test: the product images copy no development or test path into their
// final stage, every image's build context drops *.test.ts, and no product package depends on a development or
// test package outside its devDependencies (npm ci --omit=dev, as the images install, never sees them).
// Imports are Biome's to check (the noRestrictedImports override for product sources in biome.json).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

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
