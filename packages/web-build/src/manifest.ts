// The build manifest: what a build wrote (content-hashed file names) and which files each entry point needs. The
// build writes it last; the server reads it to know which files it may serve and which tags the page carries.

/** The manifest's file name inside the output folder; the assets sit in `ASSETS_FOLDER` beside it. */
export const MANIFEST_FILE = 'manifest.json';
export const ASSETS_FOLDER = 'assets';

export interface ManifestEntry {
  /** The entry's JavaScript module (file name in the assets folder). */
  script: string;
  /** Stylesheets the entry imports, in order. */
  styles: string[];
  /** Chunks the entry imports statically (preloaded by the page so they do not load one after another). */
  preload: string[];
}

export interface ManifestFile {
  contentType: string;
  bytes: number;
  gzipBytes: number;
  brotliBytes: number;
  /** Subresource Integrity value (`sha384-…`). */
  integrity: string;
}

export interface Manifest {
  version: 1;
  /** The URL path the files are served under (`/assets/` when absent). */
  base?: string;
  entries: Record<string, ManifestEntry>;
  files: Record<string, ManifestFile>;
}

/** A URL path for the built files: absolute, ending in `/`, plain characters only. */
export const PUBLIC_PATH = /^\/(?:[A-Za-z0-9_-]+\/)*$/;

/** The URL path a manifest's files are served under. */
export const publicPathOf = (manifest: Manifest): string => manifest.base ?? `/${ASSETS_FOLDER}/`;

/** A built file's name: a bare name with a content hash, no folder, no dot-dot (what the server may look up). */
export const ASSET_NAME = /^[A-Za-z0-9_-]+-[A-Za-z0-9]{6,}\.(js|css|svg|png|woff2)$/;

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
};

/** The Content-Type of a built file, from its extension; undefined for a kind the build does not produce. */
export function contentTypeOf(name: string): string | undefined {
  const ext = name.slice(name.lastIndexOf('.') + 1);
  return CONTENT_TYPES[ext];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNameList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'string' && ASSET_NAME.test(s));

/**
 * Checks a parsed manifest: every name a valid asset name, every entry's files listed in `files`. Throws with the
 * first problem found.
 * @example const manifest = parseManifest(JSON.parse(readFileSync('dist/manifest.json', 'utf8')));
 */
export function parseManifest(value: unknown): Manifest {
  if (!isRecord(value) || value.version !== 1) throw new Error('manifest: not a version 1 manifest');
  if (value.base !== undefined && (typeof value.base !== 'string' || !PUBLIC_PATH.test(value.base)))
    throw new Error('manifest: base must be a URL path like /assets/');
  const { entries, files } = value;
  if (!isRecord(entries) || !isRecord(files)) throw new Error('manifest: entries and files must be objects');
  for (const [name, file] of Object.entries(files)) {
    if (!ASSET_NAME.test(name) || !contentTypeOf(name))
      throw new Error(`manifest: bad file name ${JSON.stringify(name)}`);
    if (
      !isRecord(file) ||
      typeof file.contentType !== 'string' ||
      typeof file.integrity !== 'string' ||
      !/^sha384-[A-Za-z0-9+/]+=*$/.test(file.integrity) ||
      ![file.bytes, file.gzipBytes, file.brotliBytes].every((n) => Number.isSafeInteger(n) && (n as number) >= 0)
    ) {
      throw new Error(`manifest: bad record for ${name}`);
    }
  }
  for (const [name, entry] of Object.entries(entries)) {
    if (
      !isRecord(entry) ||
      typeof entry.script !== 'string' ||
      !isNameList([entry.script]) ||
      !isNameList(entry.styles) ||
      !isNameList(entry.preload)
    ) {
      throw new Error(`manifest: bad entry ${JSON.stringify(name)}`);
    }
    for (const f of [entry.script, ...entry.styles, ...entry.preload]) {
      if (!(f in files)) throw new Error(`manifest: entry ${name} names ${f}, which is not in files`);
    }
  }
  return value as unknown as Manifest;
}
