// Four real node processes over HTTP: records are finalized; one node down → the rest go on;
// two down → no progress and no fork, progress again when one returns; a restarted node catches up
// by pull sync; proofs verify offline with the CLI.

import { LocalCluster } from '@scriptorium/harness/local-cluster';
import type { Block } from '@scriptorium/ledger-protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertSameChain, locate, records, runCli, sleep, waitForRecords } from './helpers.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let cluster: LocalCluster;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 400 });
  await cluster.startAll();
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('4 validators', () => {
  it('finalize gossiped records on every node with one history and verifiable proofs', async () => {
    const [n0, n1, n2, n3] = cluster.nodes as [never, never, never, never];
    const batch = records('a', 40);
    const res = await cluster.post(n1, '/mempool', { records: batch });
    expect(res).toMatchObject({ status: 200, body: { accepted: 40 } });
    await waitForRecords(
      cluster,
      [n0, n1, n2, n3],
      batch.map((r) => r.id),
    );
    await assertSameChain(cluster, cluster.nodes);

    // Submitting the same records again includes nothing new (seen-id set).
    expect((await cluster.post(n2, '/mempool', { records: batch.slice(0, 5) })).body).toEqual({ accepted: 0 });

    const chain = (await cluster.get(n0, '/chain')).body as Record<string, unknown>;
    expect(chain).toMatchObject({ validators: 4, quorum: 3, is_validator: true });
    expect((chain.validator_keys as string[]).sort()).toEqual(cluster.nodes.map((n) => n.keys.publicKey).sort());

    const where = (await locate(cluster, n0, ['a-7'])).get('a-7') as [number, number];
    const proof = (await cluster.get(n3, `/proof/${where[0]}/${where[1]}`)).body as {
      record: { id: string };
      block_hash: string;
    };
    expect(proof.record.id).toBe('a-7');
    const ok = runCli(['verify-proof', '-'], JSON.stringify(proof));
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^valid/);
    const bad = runCli(['verify-proof'], JSON.stringify({ ...proof, record: { ...proof.record, value: 999 } }));
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/^invalid/);
    expect((await cluster.get(n0, `/proof/${where[0]}/99999`)).status).toBe(404);

    const block = (await cluster.get(n2, `/blocks/${where[0]}`)).body as Block;
    expect(block.commit_signatures.length).toBeGreaterThanOrEqual(3);
    // Bound to the block: the header's merkle_root and hash must match too.
    expect(runCli(['verify-proof', '-'], JSON.stringify({ ...proof, header: block.header })).status).toBe(0);
    const otherHeader = { ...block.header, timestamp: block.header.timestamp + 1 };
    expect(runCli(['verify-proof', '-'], JSON.stringify({ ...proof, header: otherHeader })).status).toBe(1);
    const metrics = (await cluster.get(n0, '/metrics')).body as string;
    expect(metrics).toMatch(/scriptorium_ledger_messages_out_total\{type="PREPARE"\} [1-9]/);
    expect(metrics).toMatch(/scriptorium_ledger_finality_latency_seconds_count [1-9]/);
    const ready = await cluster.get(n3, '/ready');
    expect(ready.status).toBe(200);
    // What pull sync is doing: it polls its 3 peers, and its last finished pass found none ahead.
    expect((ready.body as { sync: object }).sync).toMatchObject({ peers_asked: 3, last_pass: 'caught_up' });
    expect((ready.body as { sync: { passes: number } }).sync.passes).toBeGreaterThan(0);
  });

  it('with one node killed, the other three go on', async () => {
    const [n0, n1, n2, n3] = cluster.nodes as [never, never, never, never];
    await cluster.stop(n3, 'SIGKILL');
    const batch = records('b', 20);
    await cluster.post(n0, '/mempool', { records: batch });
    await waitForRecords(
      cluster,
      [n0, n1, n2],
      batch.map((r) => r.id),
    );
    await assertSameChain(cluster, [n0, n1, n2]);
  });

  it('with two killed, the rest stop without forking and resume when one returns', async () => {
    const [n0, n1, n2] = cluster.nodes as [never, never, never, never];
    await cluster.stop(n2, 'SIGKILL');
    const batch = records('c', 10);
    await cluster.post(n0, '/mempool', { records: batch });
    const before = await Promise.all([cluster.height(n0), cluster.height(n1)]);
    await sleep(2500);
    const after = await Promise.all([cluster.height(n0), cluster.height(n1)]);
    expect(after).toEqual(before);
    expect(
      (
        await locate(
          cluster,
          n0,
          batch.map((r) => r.id),
        )
      ).size,
    ).toBe(0);
    await assertSameChain(cluster, [n0, n1]);

    await cluster.start(n2);
    await waitForRecords(
      cluster,
      [n0, n1, n2],
      batch.map((r) => r.id),
      45_000,
    );
    await assertSameChain(cluster, [n0, n1, n2]);
  });

  it('a restarted node catches up by pull sync', async () => {
    const [n0, , , n3] = cluster.nodes as [never, never, never, never];
    const target = await cluster.height(n0);
    await cluster.start(n3);
    await cluster.waitFor(
      'n3 caught up',
      () => cluster.height(n3),
      (h) => h >= target,
      30_000,
    );
    await assertSameChain(cluster, cluster.nodes);
    const batch = records('d', 10);
    await cluster.post(n3, '/mempool', { records: batch });
    await waitForRecords(
      cluster,
      cluster.nodes,
      batch.map((r) => r.id),
    );
  });
});
