// The production dependency closure of one workspace, and the pruning of node_modules to it.
//
// Why: `npm ci --omit=dev --workspace W` still installs W's devDependencies that are workspace packages (the
// harness, test-support) and, with them, their own dependencies (playwright-core, testcontainers, …): npm/cli
// issue 6670. A product image's deps stage therefore runs, after npm ci:
//
//   node tools/build/prod-deps.ts services/ledger-node
//
// which keeps in node_modules only what Node's resolution reaches from W's `dependencies` (and, in turn, from each
// reached package's `dependencies`, `optionalDependencies` and required `peerDependencies`), and removes the rest.
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';

interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** What a package needs at run time: its name → whether a missing one is an error. */
function runtimeNeeds(manifest: Manifest): Map<string, boolean> {
  const needs = new Map<string, boolean>();
  for (const name of Object.keys(manifest.dependencies ?? {})) needs.set(name, true);
  for (const name of Object.keys(manifest.optionalDependencies ?? {})) needs.set(name, false);
  // An optional peer is the user's to install (then it is in someone's dependencies); a required one is needed.
  for (const name of Object.keys(manifest.peerDependencies ?? {}))
    if (!needs.has(name) && manifest.peerDependenciesMeta?.[name]?.optional !== true) needs.set(name, true);
  return needs;
}

/** Where Node finds `name` from the package in `dir` (the node_modules entry, maybe a link), or undefined. */
function resolveFrom(dir: string, name: string, root: string): string | undefined {
  for (let at = dir; ; at = dirname(at)) {
    if (basename(at) !== 'node_modules') {
      const candidate = join(at, 'node_modules', name);
      if (isEntry(candidate)) return candidate;
    }
    if (at === root || dirname(at) === at) return undefined;
  }
}

function isEntry(path: string): boolean {
  try {
    lstatSync(path);
    return existsSync(path); // a dangling link is no package
  } catch {
    return false;
  }
}

export interface Closure {
  /** node_modules entries (paths relative to the root) the workspace reaches: packages and workspace links. */
  entries: Set<string>;
  /** Real package folders reached (relative), the workspace's own included. */
  packages: Set<string>;
}

/**
 * The production closure of the workspace in `workspaceDir` under the install in `root`.
 * Throws, naming the package, when a required dependency is not installed.
 */
export function productionClosure(root: string, workspaceDir: string): Closure {
  const top = resolve(root);
  const entries = new Set<string>();
  const packages = new Set<string>();
  const queue = [realpathSync(resolve(top, workspaceDir))];
  while (queue.length > 0) {
    const dir = queue.pop() as string;
    const rel = relative(top, dir);
    if (packages.has(rel)) continue;
    packages.add(rel);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
    // A workspace outside node_modules resolves from its own folder; the chain of node_modules above it is the
    // root's, as for Node.
    for (const [name, required] of runtimeNeeds(manifest)) {
      const found = resolveFrom(dir, name, top);
      if (found === undefined) {
        if (required) throw new Error(`${manifest.name ?? rel} needs ${name}, which is not installed`);
        continue;
      }
      entries.add(relative(top, found));
      queue.push(realpathSync(found));
    }
  }
  return { entries, packages };
}

/** Removes from `nodeModules` (and the nested node_modules of what stays) every entry not in `keep`. */
function prune(top: string, nodeModules: string, keep: Set<string>, removed: string[]): void {
  if (!statSync(nodeModules, { throwIfNoEntry: false })?.isDirectory()) return;
  for (const name of readdirSync(nodeModules)) {
    const path = join(nodeModules, name);
    if (name === '.bin') continue; // its links are cleaned once the packages are gone
    if (name === '.package-lock.json') {
      rmSync(path); // npm's record of the full install; it would name what was removed
      continue;
    }
    if (name.startsWith('@')) {
      for (const scoped of readdirSync(path)) visit(join(path, scoped));
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    visit(path);
  }
  function visit(path: string) {
    const rel = relative(top, path);
    if (!keep.has(rel)) {
      rmSync(path, { recursive: true, force: true });
      removed.push(rel);
    } else if (!lstatSync(path).isSymbolicLink()) prune(top, join(path, 'node_modules'), keep, removed);
  }
  const bin = join(nodeModules, '.bin');
  if (statSync(bin, { throwIfNoEntry: false })?.isDirectory())
    for (const link of readdirSync(bin)) if (!existsSync(join(bin, link))) rmSync(join(bin, link));
}

/**
 * Prunes the install in `root` to the production closure of `workspaceDir`: the root's node_modules and the
 * node_modules of every workspace the closure reaches. Returns the removed entries (relative paths).
 */
export function pruneToClosure(
  root: string,
  workspaceDir: string,
  closure: Closure = productionClosure(root, workspaceDir),
): string[] {
  const top = resolve(root);
  const { entries, packages } = closure;
  const removed: string[] = [];
  prune(top, join(top, 'node_modules'), entries, removed);
  for (const pkg of packages)
    if (!pkg.split('/').includes('node_modules')) prune(top, join(top, pkg, 'node_modules'), entries, removed);
  return removed;
}

if (import.meta.main) {
  const workspace = process.argv[2];
  if (!workspace) {
    console.error('usage: node tools/build/prod-deps.ts WORKSPACE_DIR   (run in the install root, after npm ci)');
    process.exit(2);
  }
  const closure = productionClosure(process.cwd(), workspace);
  const removed = pruneToClosure(process.cwd(), workspace, closure);
  console.error(
    `prod-deps: ${workspace}: kept ${closure.entries.size} node_modules entries, removed ${removed.length}`,
  );
}
