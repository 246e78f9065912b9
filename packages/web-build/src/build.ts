// The build: esbuild bundles each entry point (TypeScript, JSX, CSS) into minified ES modules and stylesheets with a
// content hash in every file name; each file is also written gzip- and brotli-compressed, and the manifest last. A
// file is written to a temporary name and renamed into place, so two builds of the same sources at once (test
// workers) and a server reading meanwhile never see half a file. Needs the `esbuild` package (a peer dependency).
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import {
  ASSET_NAME,
  ASSETS_FOLDER,
  contentTypeOf,
  MANIFEST_FILE,
  type Manifest,
  type ManifestEntry,
  type ManifestFile,
  PUBLIC_PATH,
} from './manifest.ts';

export interface BuildOptions {
  /** Entry name → source file (`{ app: 'web/src/main.tsx' }`). The name starts the built file's name. */
  entryPoints: Record<string, string>;
  /** Output folder: `manifest.json` and `assets/` are written there. */
  outdir: string;
  /** The JSX runtime package (`preact`, `react`); omit for no JSX. */
  jsxImportSource?: string;
  /** A tsconfig for esbuild to read (paths, decorators); optional. */
  tsconfig?: string;
  /** Browsers to build for (esbuild targets). */
  target?: string[];
  /** Default true; false keeps the output readable (debugging). */
  minify?: boolean;
  /** The URL path the files are served under (default `/assets/`); recorded in the manifest for the page's tags. */
  publicPath?: string;
}

export interface BuildResult {
  manifest: Manifest;
  /** The manifest's path. */
  manifestPath: string;
}

/** Evergreen browsers from early 2023 on: native ES modules, top-level await, private fields, CSS nesting. */
export const DEFAULT_TARGET = ['es2022', 'chrome111', 'edge111', 'firefox114', 'safari16.5'];

/** Writes `data` to `path` through a temporary file and a rename (atomic on one file system). */
async function writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}

const gzip = (data: Uint8Array) => gzipSync(data, { level: 9 });
const brotli = (data: Uint8Array) =>
  brotliCompressSync(data, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.byteLength },
  });

/**
 * Bundles the entry points into `outdir` and writes the manifest. Files of earlier builds that the new manifest does
 * not name are removed afterwards (a running server keeps its own copy in memory).
 * @example await buildBundle({ entryPoints: { app: 'web/src/main.tsx' }, outdir: 'web/dist', jsxImportSource: 'preact' });
 */
export async function buildBundle(opts: BuildOptions): Promise<BuildResult> {
  const outdir = resolve(opts.outdir);
  const publicPath = opts.publicPath ?? `/${ASSETS_FOLDER}/`;
  if (!PUBLIC_PATH.test(publicPath))
    throw new Error(`web-build: publicPath ${publicPath} is not a URL path like /assets/`);
  const assetsDir = join(outdir, ASSETS_FOLDER);
  const result = await esbuild.build({
    entryPoints: opts.entryPoints,
    outdir: assetsDir,
    bundle: true,
    format: 'esm',
    splitting: true,
    platform: 'browser',
    target: opts.target ?? DEFAULT_TARGET,
    minify: opts.minify ?? true,
    sourcemap: false,
    charset: 'utf8',
    legalComments: 'eof',
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    assetNames: '[name]-[hash]',
    publicPath,
    define: { 'process.env.NODE_ENV': '"production"' },
    metafile: true,
    write: false,
    logLevel: 'silent',
    ...(opts.jsxImportSource ? { jsx: 'automatic' as const, jsxImportSource: opts.jsxImportSource } : {}),
    ...(opts.tsconfig ? { tsconfig: opts.tsconfig } : {}),
  });

  // esbuild names outputs by their path relative to the working directory; entry points by their source path.
  const cwd = process.cwd();
  const nameOf = (outputPath: string) => basename(outputPath);
  const sourceToEntry = new Map(
    Object.entries(opts.entryPoints).map(([name, src]) => [relative(cwd, resolve(src)), name] as const),
  );

  const files: Record<string, ManifestFile> = {};
  await mkdir(assetsDir, { recursive: true });
  for (const out of result.outputFiles) {
    const name = nameOf(out.path);
    const contentType = contentTypeOf(name);
    if (!ASSET_NAME.test(name) || !contentType) throw new Error(`web-build: unexpected output ${name}`);
    const gz = gzip(out.contents);
    const br = brotli(out.contents);
    await writeAtomic(join(assetsDir, name), out.contents);
    await writeAtomic(join(assetsDir, `${name}.gz`), gz);
    await writeAtomic(join(assetsDir, `${name}.br`), br);
    files[name] = {
      contentType,
      bytes: out.contents.byteLength,
      gzipBytes: gz.byteLength,
      brotliBytes: br.byteLength,
      integrity: `sha384-${createHash('sha384').update(out.contents).digest('base64')}`,
    };
  }

  const entries: Record<string, ManifestEntry> = {};
  for (const [outputPath, output] of Object.entries(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const entry = sourceToEntry.get(output.entryPoint);
    if (!entry || !outputPath.endsWith('.js')) continue;
    entries[entry] = {
      script: nameOf(outputPath),
      styles: output.cssBundle ? [nameOf(output.cssBundle)] : [],
      preload: staticImports(result.metafile, outputPath).map(nameOf),
    };
  }
  for (const name of Object.keys(opts.entryPoints)) {
    if (!entries[name]) throw new Error(`web-build: no output found for entry point ${name}`);
  }

  const manifest: Manifest = { version: 1, ...(opts.publicPath ? { base: publicPath } : {}), entries, files };
  const manifestPath = join(outdir, MANIFEST_FILE);
  await writeAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);

  // Files of earlier builds (and temporaries of a build that died) are removed once the new manifest is in place.
  const keep = new Set(Object.keys(files).flatMap((f) => [f, `${f}.gz`, `${f}.br`]));
  for (const f of await readdir(assetsDir)) {
    if (!keep.has(f) && !f.endsWith('.tmp')) await rm(join(assetsDir, f), { force: true });
  }
  return { manifest, manifestPath };
}

/** Every chunk `outputPath` imports statically, directly or through other chunks, in first-seen order. */
function staticImports(metafile: esbuild.Metafile, outputPath: string): string[] {
  const seen = new Set<string>();
  const visit = (path: string) => {
    for (const i of metafile.outputs[path]?.imports ?? []) {
      if (i.kind !== 'import-statement' || i.external || seen.has(i.path)) continue;
      seen.add(i.path);
      visit(i.path);
    }
  };
  visit(outputPath);
  return [...seen];
}

/** The sum of the gzip-compressed sizes of everything an entry loads at start (script, its chunks, styles). */
export function entryGzipBytes(manifest: Manifest, entry: string): number {
  const e = manifest.entries[entry];
  if (!e) throw new Error(`no entry ${entry}`);
  return [e.script, ...e.preload, ...e.styles].reduce((sum, f) => sum + (manifest.files[f]?.gzipBytes ?? 0), 0);
}

/** A browser app's build: `BuildOptions`, and what its build script's report calls it. */
export interface WebApp extends BuildOptions {
  /** How the report names the app ("web app", "ledger console"). */
  name: string;
}

/**
 * Builds `app` (into `outdir` when given, else `app.outdir`). With `report`, also writes each file's size and gzip
 * size, then the time taken and what each entry loads at start (gzip): what a build script prints.
 * @example if (import.meta.main) await buildWebApp(APP, { outdir: process.argv[2], report: console.log });
 */
export async function buildWebApp(
  app: WebApp,
  { outdir, report }: { outdir?: string | undefined; report?: (line: string) => void } = {},
): Promise<BuildResult> {
  const started = performance.now();
  const result = await buildBundle({ ...app, outdir: outdir ?? app.outdir });
  if (report) {
    const { manifest, manifestPath } = result;
    const width = Math.max(...Object.keys(manifest.files).map((name) => name.length));
    for (const [name, f] of Object.entries(manifest.files)) {
      report(`  ${name.padEnd(width)} ${String(f.bytes).padStart(8)} B  ${String(f.gzipBytes).padStart(7)} B gzip`);
    }
    const atStart = Object.keys(manifest.entries)
      .map((entry) => `${entry}: ${(entryGzipBytes(manifest, entry) / 1024).toFixed(1)} KiB gzip at start`)
      .join(', ');
    report(`${app.name} built in ${Math.round(performance.now() - started)} ms: ${manifestPath} (${atStart})`);
  }
  return result;
}
