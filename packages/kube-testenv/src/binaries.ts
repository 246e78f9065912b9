import { accessSync, constants, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The binaries tools/kube/build.sh puts in one folder. */
export const KUBE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'helm', 'kind'] as const;
export type KubeBinary = (typeof KUBE_BINARIES)[number];

/** tools/kube/versions.env, the one place the versions are written. */
export const VERSIONS_FILE = fileURLToPath(new URL('../../../tools/kube/versions.env', import.meta.url));

/** Parses the `KEY=value` lines of versions.env (comments and blank lines ignored). */
export function parseVersions(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([A-Z_][A-Z0-9_]*)=(\S+)$/.exec(line);
    if (!match?.[1] || !match[2]) throw new Error(`versions.env: cannot read line "${line}"`);
    out[match[1]] = match[2];
  }
  return out;
}

/** The cache root, as the Makefile and build.sh compute it. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SCRIPTORIUM_CACHE) return env.SCRIPTORIUM_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'scriptorium');
}

/**
 * The folder holding the binaries: `SCRIPTORIUM_KUBE_BIN` when set, else the folder
 * tools/kube/build.sh writes, `$SCRIPTORIUM_CACHE/kube/<KUBE_VERSION>/bin`.
 *
 * @example kubeBinDir({ SCRIPTORIUM_CACHE: '/c' }, 'KUBE_VERSION=v1.34.4') // '/c/kube/v1.34.4/bin'
 */
export function kubeBinDir(env: NodeJS.ProcessEnv = process.env, versionsText?: string): string {
  if (env.SCRIPTORIUM_KUBE_BIN) return env.SCRIPTORIUM_KUBE_BIN;
  const versions = parseVersions(versionsText ?? readFileSync(VERSIONS_FILE, 'utf8'));
  const kube = versions.KUBE_VERSION;
  if (!kube) throw new Error(`${VERSIONS_FILE} has no KUBE_VERSION line`);
  return join(cacheDir(env), 'kube', kube, 'bin');
}

/** Absolute path of one binary; a clear error when it has not been built yet. */
export function kubeBinary(name: KubeBinary, env: NodeJS.ProcessEnv = process.env): string {
  const dir = kubeBinDir(env);
  const path = join(dir, name);
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `kube-testenv: ${name} not found at ${path}. Run \`make kube-bins\` (builds etcd, kube-apiserver, ` +
        'kube-controller-manager, helm and kind into the cache), or point SCRIPTORIUM_KUBE_BIN at a folder holding them.',
    );
  }
  return path;
}
