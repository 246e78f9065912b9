// Helpers shared by the multi-process tests.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { LocalCluster, LocalNode } from '@scriptorium/harness/local-cluster';
import type { Block } from '@scriptorium/ledger-protocol';
import { blockHash } from '@scriptorium/ledger-protocol';

export const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

export function records(prefix: string, count: number): Array<{ id: string; entity: string; value: number }> {
  return Array.from({ length: count }, (_, i) => ({ id: `${prefix}-${i}`, entity: `urn:test:${prefix}`, value: i }));
}

/** Where each record id sits on a node's chain (scans every block). */
export async function locate(
  cluster: LocalCluster,
  node: LocalNode,
  ids: string[],
): Promise<Map<string, [number, number]>> {
  const want = new Set(ids);
  const found = new Map<string, [number, number]>();
  const height = await cluster.height(node);
  for (let h = 1; h <= height; h++) {
    const block = (await cluster.get(node, `/blocks/${h}`)).body as Block;
    block.records.forEach((r, i) => {
      if (want.has(r.id)) found.set(r.id, [h, i]);
    });
  }
  return found;
}

export async function waitForRecords(
  cluster: LocalCluster,
  nodes: LocalNode[],
  ids: string[],
  timeoutMs = 60_000,
): Promise<void> {
  for (const node of nodes) {
    await cluster.waitFor(
      `${ids.length} records on ${node.nodeId}`,
      () => locate(cluster, node, ids).then((m) => m.size),
      (n) => n === ids.length,
      timeoutMs,
    );
  }
}

/** Asserts one history: every height up to the lowest tip has the same block hash on every node. */
export async function assertSameChain(cluster: LocalCluster, nodes: LocalNode[]): Promise<number> {
  const heights = await Promise.all(nodes.map((n) => cluster.height(n)));
  const common = Math.min(...heights);
  for (let h = 0; h <= common; h++) {
    const hashes = new Set<string>();
    for (const n of nodes) hashes.add(blockHash(((await cluster.get(n, `/blocks/${h}`)).body as Block).header));
    if (hashes.size !== 1) throw new Error(`fork at height ${h}: ${[...hashes].join(' ')}`);
  }
  return common;
}

export function runCli(
  args: string[],
  input?: string,
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [MAIN, ...args], {
    input,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 20_000,
  });
  return { status: res.status, stdout: res.stdout, stderr: res.stderr };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it gives a truthy value (an error counts as not yet), or fails naming `what`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 90_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
