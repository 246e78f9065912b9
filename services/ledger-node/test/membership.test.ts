// Membership through the API: a 5th node that starts as a passive follower becomes a validator after
// an ADD submitted via POST /membership; a removed validator becomes a follower and keeps following. Then light
// evidence across both changes: every node, the late joiner included, serves the same GET /evidence for old and new
// blocks, and it verifies from the genesis file alone with the protocol's verifier and `ledger-node verify-proof`.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { type Block, type LightEvidence, verifyLightEvidence } from '@scriptorium/ledger-protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertSameChain, locate, records, runCli, waitForRecords } from './helpers.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let cluster: LocalCluster;
let fifth: LocalNode;

interface Status {
  height: number;
  validators: number;
  quorum: number;
  is_validator: boolean;
  validator_keys: string[];
}
const status = async (n: LocalNode) => (await cluster.get(n, '/chain')).body as Status;

beforeAll(async () => {
  // A peer outside the validator set is forgotten after 3 s without an answer (30 s by default): the last test.
  cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 400, env: { NODE_PEERS__FORGET_AFTER_MS: '3000' } });
  await cluster.startAll();
  // The 5th node is unknown to the others and knows only node-0: discovery must do the rest.
  fifth = await cluster.addNode();
  await cluster.start(fifth, { NODE_PEERS: (cluster.nodes[0] as LocalNode).peerSpec });
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('membership', () => {
  it('discovery: a node seeded with one peer learns every peer, and every peer learns it', async () => {
    const all = cluster.nodes.map((n) => n.peerSpec);
    await cluster.waitFor(
      'every registry holds all 5 specs',
      () =>
        Promise.all(
          cluster.nodes.map((n) => cluster.get(n, '/peers', true).then((r) => (r.body as { peers: string[] }).peers)),
        ),
      (lists) => lists.every((l) => all.every((spec) => l.includes(spec))),
    );
    // A re-announce with a new address for the same key updates the entry in place, and stays moved while the
    // other nodes' announcements still carry the old address: hearsay never moves a known key. (A key no node
    // runs, so only n2's POSTs speak for it.)
    const n2 = cluster.nodes[2] as LocalNode;
    const ghost = 'e'.repeat(64);
    const first = `ghost@127.0.0.9:1|${ghost}`;
    expect((await cluster.post(n2, '/peers', { peers: [first] })).body).toEqual({ added: 1, updated: 0 });
    const others = cluster.nodes.filter((n) => n !== n2);
    await cluster.waitFor(
      'every other node has heard of the first address',
      () =>
        Promise.all(
          others.map((n) => cluster.get(n, '/peers', true).then((r) => (r.body as { peers: string[] }).peers)),
        ),
      (lists) => lists.every((l) => l.includes(first)),
    );
    const moved = `ghost@127.0.0.10:2|${ghost}`;
    expect((await cluster.post(n2, '/peers', { peers: [moved] })).body).toEqual({ added: 0, updated: 1 });
    // Two announce rounds (1 s each here), in which n2 pulls the others' lists holding the first address.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const list = (await cluster.get(n2, '/peers', true)).body as { peers: string[] };
    expect(list.peers.filter((p) => p.endsWith(ghost))).toEqual([moved]);
  });

  it('a 5th node follows as a passive follower, then becomes a validator after POST /membership ADD', async () => {
    const [n0, n1] = cluster.nodes as [LocalNode, LocalNode];
    const s = await status(fifth);
    expect(s.is_validator).toBe(false);
    const batch = records('m1', 5);
    await cluster.post(n0, '/mempool', { records: batch });
    await waitForRecords(
      cluster,
      [fifth],
      batch.map((r) => r.id),
    );
    await cluster.waitFor(
      'fifth ready',
      () => cluster.get(fifth, '/ready').then((r) => r.status),
      (c) => c === 200,
      20_000,
    );

    const add = await cluster.post(n1, '/membership', {
      changes: [{ action: 'ADD', validator: fifth.keys.publicKey }],
    });
    expect(add.status).toBe(200);
    await cluster.waitFor(
      '5 validators everywhere',
      () => Promise.all(cluster.nodes.map(status)),
      (all) => all.every((x) => x.validators === 5 && x.quorum === 4),
    );
    expect((await status(fifth)).is_validator).toBe(true);
    // Work for the next heights (an idle chain makes no blocks), which the 5th node now helps to commit: a
    // small batch per poll, since a quorum may finalize one block before a slow 5th node sends its COMMIT.
    const more = records('m2', 10);
    await cluster.post(fifth, '/mempool', { records: more });
    let extra = 0;
    await cluster.waitFor(
      'the 5th node signs',
      async () => {
        await cluster.post(fifth, '/mempool', { records: records(`m3-${extra++}`, 2) });
        return cluster.get(fifth, '/metrics').then((r) => String(r.body));
      },
      (m) => /scriptorium_ledger_messages_out_total\{type="COMMIT"\} [1-9]/.test(m),
      20_000,
    );
    await waitForRecords(
      cluster,
      cluster.nodes,
      more.map((r) => r.id),
    );
    await assertSameChain(cluster, cluster.nodes);
  });

  it('a removed validator becomes a follower and keeps following', async () => {
    const [n0, , n2, n3] = cluster.nodes as [LocalNode, LocalNode, LocalNode, LocalNode];
    const res = await cluster.post(n0, '/admin/validator', { action: 'REMOVE', validator: n3.keys.publicKey });
    expect(res.status).toBe(200);
    await cluster.waitFor(
      'n3 removed',
      () => Promise.all(cluster.nodes.map(status)),
      (all) => all.every((x) => x.validators === 4),
    );
    const s3 = await status(n3);
    expect(s3.is_validator).toBe(false);
    expect(s3.validator_keys).not.toContain(n3.keys.publicKey);
    const metrics = String((await cluster.get(n3, '/metrics')).body);
    expect(metrics).toMatch(/scriptorium_ledger_is_validator 0/);
    const batch = records('m3', 10);
    await cluster.post(n2, '/mempool', { records: batch });
    await waitForRecords(
      cluster,
      cluster.nodes,
      batch.map((r) => r.id),
    );
    await assertSameChain(cluster, cluster.nodes);
  });

  it('light evidence after the ADD and the REMOVE: the same from every node, valid from genesis alone', async () => {
    const n0 = cluster.nodes[0] as LocalNode;
    const genesis = JSON.parse(readFileSync(cluster.genesisFile, 'utf8')) as Block;
    // Records from before the ADD (m1), between the ADD and the REMOVE (m2) and after the REMOVE (m3).
    const where = await locate(cluster, n0, ['m1-0', 'm2-0', 'm3-0']);
    const places = ['m1-0', 'm2-0', 'm3-0'].map((id) => where.get(id) as [number, number]);
    const membershipCounts: number[] = [];
    for (const [h, i] of places) {
      const served = await Promise.all(cluster.nodes.map((n) => cluster.get(n, `/evidence/${h}/${i}`)));
      expect(served.map((r) => r.status)).toEqual(cluster.nodes.map(() => 200));
      // The late joiner (the 5th node) serves what the genesis validators serve, for old blocks too: the same record,
      // proof, headers and membership blocks. Only the certificates may differ: each node keeps the quorum of commit
      // seals it collected (or synced), and each of them is valid. So may the checkpoint covering the block: each
      // node serves the latest it holds (judged with the rest by the verifier below).
      const unsealed = ({ checkpoint: _checkpoint, ...e }: LightEvidence) => ({
        ...e,
        membership: e.membership.map((m) => ({ ...m, commit_signatures: [] })),
        block: { ...e.block, commit_signatures: [] },
      });
      for (const r of served) {
        expect(unsealed(r.body as LightEvidence)).toEqual(unsealed(served[0]?.body as LightEvidence));
        const report = verifyLightEvidence(r.body, genesis);
        expect(report.ok, report.lines.join('; ')).toBe(true);
      }
      const evidence = served[0]?.body as LightEvidence;
      membershipCounts.push(evidence.membership.length);
      const file = join(cluster.dir, `evidence-${h}-${i}.json`);
      writeFileSync(file, JSON.stringify(evidence));
      const cli = runCli(['verify-proof', '--genesis', cluster.genesisFile, file]);
      expect(cli.status, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(/^valid \(genesis [0-9a-f]{64}\): /);
      // The same evidence with the record changed is refused by both.
      const forged = { ...evidence, proof: { ...evidence.proof, record: { ...evidence.proof.record, value: -1 } } };
      expect(verifyLightEvidence(forged, genesis).ok).toBe(false);
      writeFileSync(file, JSON.stringify(forged));
      expect(runCli(['verify-proof', '--genesis', cluster.genesisFile, file]).status).toBe(1);
    }
    // Before the ADD no membership block; between them the ADD's; after both, the ADD's and the REMOVE's.
    expect(membershipCounts).toEqual([0, 1, 2]);
    expect((await cluster.get(n0, `/evidence/${places[2]?.[0]}/100000`)).status).toBe(404);
    expect((await cluster.get(n0, '/evidence/999999/0')).status).toBe(404);
    expect((await cluster.get(n0, '/evidence/x/0')).status).toBe(400);
  });

  it('a removed validator that is gone is forgotten by its peers (hearsay does not bring it back); an active one away as long is not', async () => {
    const [n0, n1, n2, n3] = cluster.nodes as [LocalNode, LocalNode, LocalNode, LocalNode];
    const knows = async (n: LocalNode, key: string) =>
      ((await cluster.get(n, '/peers', true)).body as { peers: string[] }).peers.some((p) => p.endsWith(`|${key}`));
    const others = [n0, n1, fifth];
    for (const n of others) expect(await knows(n, n3.keys.publicKey)).toBe(true);
    // n3 (removed above) and n2 (active) both stop; after the grace period only n3 is forgotten, by every node,
    // although each node's registry is announced to the others every second.
    await cluster.stop(n3);
    await cluster.stop(n2);
    await cluster.waitFor(
      'every running node to forget n3',
      () => Promise.all(others.map((n) => knows(n, n3.keys.publicKey))),
      (known) => known.every((k) => !k),
    );
    await new Promise((r) => setTimeout(r, 2000));
    for (const n of others) {
      expect(await knows(n, n3.keys.publicKey)).toBe(false);
      expect(await knows(n, n2.keys.publicKey)).toBe(true);
    }
    // n3 back: its own announcement makes it known again.
    await cluster.start(n3);
    await cluster.start(n2);
    await cluster.waitFor(
      'every node to know n3 again',
      () => Promise.all(others.map((n) => knows(n, n3.keys.publicKey))),
      (known) => known.every(Boolean),
    );
  });
});
