// Serving a build: the files the manifest names are read into memory once (with their gzip and brotli copies), and
// answered with their content type, Subresource Integrity-checked tags for the page, and caching for a year: a file's
// name changes whenever its content does, so a cached copy is never stale. Framework-free: the caller's route sends
// the status, headers and body this module returns.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ASSET_NAME, ASSETS_FOLDER, MANIFEST_FILE, type Manifest, parseManifest, publicPathOf } from './manifest.ts';

/** Cache-Control of a content-hashed file: a year, and no revalidation. */
export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

export type Encoding = 'br' | 'gzip' | 'identity';

export interface AssetResponse {
  headers: Record<string, string>;
  body: Buffer;
}

export interface AssetStore {
  manifest: Manifest;
  /** The answer for `name` (a bare file name), in the best encoding `acceptEncoding` allows; undefined when unknown. */
  response(name: string, acceptEncoding: string | undefined): AssetResponse | undefined;
  /** The `<link>` and `<script>` tags an entry needs, each with `nonce` and its integrity value. */
  tags(entry: string, nonce: string): string;
}

/**
 * The best encoding an Accept-Encoding header allows among brotli, gzip and none (RFC 9110 §12.5.3: a coding with
 * q=0 is refused; `*` stands for every coding not named).
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  if (!acceptEncoding) return 'identity';
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (!coding) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(coding, Number.isFinite(value) ? value : 0);
  }
  const weight = (coding: string) => q.get(coding) ?? q.get('*') ?? 0;
  if (weight('br') > 0 && weight('br') >= weight('gzip')) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The tags of one entry, for the page's `<head>`; every URL under the manifest's base path (`/assets/`). */
export function entryTags(manifest: Manifest, entry: string, nonce: string): string {
  const e = manifest.entries[entry];
  if (!e) throw new Error(`web-build: the manifest has no entry ${entry}`);
  const url = (f: string) => `${publicPathOf(manifest)}${escapeAttr(f)}`;
  const sri = (f: string) => escapeAttr(manifest.files[f]?.integrity ?? '');
  const n = escapeAttr(nonce);
  return [
    ...e.styles.map((f) => `<link rel="stylesheet" href="${url(f)}" integrity="${sri(f)}" nonce="${n}">`),
    ...e.preload.map((f) => `<link rel="modulepreload" href="${url(f)}" integrity="${sri(f)}" nonce="${n}">`),
    `<script type="module" src="${url(e.script)}" integrity="${sri(e.script)}" nonce="${n}"></script>`,
  ].join('\n');
}

/**
 * Reads the build in `dir` (its `manifest.json` and `assets/`); undefined when there is no manifest (not built).
 * Throws when the manifest is invalid or names a file that is missing.
 * @example const assets = loadAssets(join(import.meta.dirname, '../web/dist'));
 */
export function loadAssets(dir: string): AssetStore | undefined {
  let raw: string;
  try {
    raw = readFileSync(join(dir, MANIFEST_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const manifest = parseManifest(JSON.parse(raw));
  const bodies = new Map<string, Record<Encoding, Buffer>>();
  for (const name of Object.keys(manifest.files)) {
    const path = join(dir, ASSETS_FOLDER, name);
    bodies.set(name, {
      identity: readFileSync(path),
      gzip: readFileSync(`${path}.gz`),
      br: readFileSync(`${path}.br`),
    });
  }
  return {
    manifest,
    response(name, acceptEncoding) {
      if (!ASSET_NAME.test(name)) return undefined;
      const file = manifest.files[name];
      const body = bodies.get(name);
      if (!file || !body) return undefined;
      const encoding = chooseEncoding(acceptEncoding);
      return {
        body: body[encoding],
        headers: {
          'content-type': file.contentType,
          'cache-control': IMMUTABLE_CACHE_CONTROL,
          vary: 'accept-encoding',
          etag: `"${file.integrity}"`,
          'x-content-type-options': 'nosniff',
          'cross-origin-resource-policy': 'same-origin',
          ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
        },
      };
    },
    tags: (entry, nonce) => entryTags(manifest, entry, nonce),
  };
}
