// The real build (esbuild) on a small TSX app with a stylesheet, a shared chunk and a lazily loaded module, then the
// serving side on what it wrote.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBundle, buildWebApp, entryGzipBytes } from '../src/build.ts';
import { IMMUTABLE_CACHE_CONTROL, loadAssets } from '../src/index.ts';

let dir: string;
let src: string;
let out: string;

const sources: Record<string, string> = {
  'main.tsx': `import './main.css';
import { shared } from './shared.ts';
const h = (tag: string, _props: unknown, ...children: unknown[]) => ({ tag, children });
export const view = <p>{shared('main')}</p>;
document.body.append(JSON.stringify(view));
document.addEventListener('click', () => import('./lazy.ts').then((m) => m.run()));`,
  'other.ts': `import { shared } from './shared.ts';\nconsole.log(shared('other'));`,
  'shared.ts': `export const shared = (who: string) => 'hello from ' + who + ' ' + '#'.repeat(2000);`,
  'lazy.ts': `export const run = () => console.log('lazy');`,
  'main.css': `body { color: #222; }\n.x { & .y { color: red; } }`,
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'web-build-'));
  src = join(dir, 'src');
  out = join(dir, 'dist');
  await mkdir(src);
  for (const [name, text] of Object.entries(sources)) await writeFile(join(src, name), text);
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const build = () =>
  buildBundle({
    entryPoints: { app: join(src, 'main.tsx'), other: join(src, 'other.ts') },
    outdir: out,
    // The fixture's own tiny JSX factory: classic transform, no runtime package.
    tsconfig: join(src, 'tsconfig.json'),
  });

describe('buildBundle', () => {
  it('writes hashed files, their compressed copies and a manifest that names them', async () => {
    await writeFile(join(src, 'tsconfig.json'), JSON.stringify({ compilerOptions: { jsx: 'react', jsxFactory: 'h' } }));
    const { manifest } = await build();
    const app = manifest.entries.app!;
    expect(app.script).toMatch(/^app-[A-Z0-9]{8}\.js$/);
    expect(app.styles).toEqual([expect.stringMatching(/^app-[A-Z0-9]{8}\.css$/)]);
    // main and other share shared.ts: it becomes a chunk both import statically, so the page preloads it.
    expect(app.preload).toEqual([expect.stringMatching(/^chunk-[A-Z0-9]{8}\.js$/)]);
    expect(manifest.entries.other!.preload).toEqual(app.preload);
    // The lazy module is a chunk too, but loaded on demand: not preloaded.
    const chunks = Object.keys(manifest.files).filter((f) => f.startsWith('chunk-'));
    expect(chunks).toHaveLength(2);

    for (const [name, meta] of Object.entries(manifest.files)) {
      const body = await readFile(join(out, 'assets', name));
      expect(meta.bytes).toBe(body.byteLength);
      expect(meta.integrity).toBe(`sha384-${createHash('sha384').update(body).digest('base64')}`);
      const gz = await readFile(join(out, 'assets', `${name}.gz`));
      expect(gunzipSync(gz).equals(body)).toBe(true);
      expect(meta.gzipBytes).toBe(gz.byteLength);
      const br = await readFile(join(out, 'assets', `${name}.br`));
      expect(brotliDecompressSync(br).equals(body)).toBe(true);
      expect(meta.brotliBytes).toBe(br.byteLength);
    }
    // Minified, CSS nesting kept for the targets that have it.
    const css = await readFile(join(out, 'assets', app.styles[0]!), 'utf8');
    expect(css).toContain('body{color:#222}');
    expect(entryGzipBytes(manifest, 'app')).toBe(
      [app.script, ...app.preload, ...app.styles].reduce((s, f) => s + manifest.files[f]!.gzipBytes, 0),
    );
  });

  it('changes a file name when, and only when, its content changes, and removes the old files', async () => {
    const before = (await build()).manifest;
    const same = (await build()).manifest;
    expect(same).toEqual(before);
    await writeFile(join(src, 'main.css'), 'body { color: #333; }');
    const after = (await build()).manifest;
    expect(after.entries.app!.styles).not.toEqual(before.entries.app!.styles);
    expect(after.entries.other).toEqual(before.entries.other);
    const onDisk = await readdir(join(out, 'assets'));
    expect(onDisk.sort()).toEqual(
      Object.keys(after.files)
        .flatMap((f) => [f, `${f}.br`, `${f}.gz`])
        .sort(),
    );
  });

  it('gives the same result when several builds of the same sources run at once', async () => {
    const results = await Promise.all([build(), build(), build()]);
    expect(results[1]!.manifest).toEqual(results[0]!.manifest);
    expect(results[2]!.manifest).toEqual(results[0]!.manifest);
    expect(loadAssets(out)?.manifest).toEqual(results[0]!.manifest);
  });

  it('fails on a source that does not compile, leaving the previous build in place', async () => {
    const before = await readFile(join(out, 'manifest.json'), 'utf8');
    await writeFile(join(src, 'lazy.ts'), 'export const run = (;');
    try {
      await expect(build()).rejects.toThrow(/lazy\.ts:1:20: ERROR: Unexpected ";"/);
      expect(await readFile(join(out, 'manifest.json'), 'utf8')).toBe(before);
    } finally {
      await writeFile(join(src, 'lazy.ts'), sources['lazy.ts']!);
    }
  });
});

describe('buildWebApp', () => {
  it("builds into the app's folder or the one given, and reports each file and what each entry loads at start", async () => {
    const other = join(dir, 'other-dist');
    const lines: string[] = [];
    const app = {
      name: 'test app',
      entryPoints: { app: join(src, 'main.tsx') },
      outdir: join(dir, 'app-dist'),
      tsconfig: join(src, 'tsconfig.json'),
    };
    const { manifest, manifestPath } = await buildWebApp(app, { outdir: other, report: (l) => lines.push(l) });
    expect(manifestPath).toBe(join(other, 'manifest.json'));
    expect(lines).toHaveLength(Object.keys(manifest.files).length + 1);
    for (const name of Object.keys(manifest.files))
      expect(lines.some((l) => l.trimStart().startsWith(name))).toBe(true);
    const kib = (entryGzipBytes(manifest, 'app') / 1024).toFixed(1);
    expect(lines.at(-1)).toMatch(
      new RegExp(`^test app built in \\d+ ms: .*manifest\\.json \\(app: ${kib} KiB gzip at start\\)$`),
    );
    expect((await buildWebApp(app)).manifestPath).toBe(join(dir, 'app-dist', 'manifest.json'));
  });
});

describe('loadAssets', () => {
  it('answers each file in the encoding asked for, cached for a year', async () => {
    const { manifest } = await build();
    const assets = loadAssets(out)!;
    const name = manifest.entries.app!.script;
    const plain = await readFile(join(out, 'assets', name));
    const br = assets.response(name, 'gzip, deflate, br')!;
    expect(br.headers).toMatchObject({
      'content-type': 'text/javascript; charset=utf-8',
      'content-encoding': 'br',
      'cache-control': IMMUTABLE_CACHE_CONTROL,
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
    });
    expect(brotliDecompressSync(br.body).equals(plain)).toBe(true);
    expect(gunzipSync(assets.response(name, 'gzip')!.body).equals(plain)).toBe(true);
    const identity = assets.response(name, undefined)!;
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(plain)).toBe(true);
  });

  it('knows only the files of the manifest', async () => {
    const assets = loadAssets(out)!;
    for (const name of [
      'manifest.json',
      '../dist/manifest.json',
      'app-XXXXXXXX.js',
      `${assets.manifest.entries.app!.script}.gz`,
    ]) {
      expect(assets.response(name, 'gzip')).toBeUndefined();
    }
  });

  it('says "not built" for a folder without a manifest, and refuses a broken one', async () => {
    expect(loadAssets(join(dir, 'nothing-here'))).toBeUndefined();
    const broken = join(dir, 'broken');
    await mkdir(broken);
    await writeFile(join(broken, 'manifest.json'), JSON.stringify({ version: 1, entries: {}, files: { 'x.js': {} } }));
    expect(() => loadAssets(broken)).toThrow(/bad file name/);
  });

  it('writes tags for the page naming the built files', async () => {
    const assets = loadAssets(out)!;
    const tags = assets.tags('app', 'abc');
    const { script, styles } = assets.manifest.entries.app!;
    expect(tags).toContain(`<script type="module" src="/assets/${script}"`);
    expect(tags).toContain(`<link rel="stylesheet" href="/assets/${styles[0]}"`);
  });
});
