// Records a node accepted whose gossip was lost reach a proposer all the same, two ways. Two followers take records
// while every validator is down (their gossip of them is lost); the validators come back and make blocks without them
// (only the followers hold them, and a follower never proposes). One follower gossips its pending records again after
// NODE_MEMPOOL__REGOSSIP_AFTER_MS, and they become final while it runs. The other, with that off (0), holds them
// until it stops gracefully: SIGTERM hands them to its peers and they become final. With SIGKILL instead they would be
// lost, as the crash test says.
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { locate, records, sleep, waitForRecords } from './helpers.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let cluster: LocalCluster;
/** Holds its records until it stops (gossips them once). */
let follower: LocalNode;
/** Gossips its pending records again. */
let regossiping: LocalNode;
const REGOSSIP_AFTER_MS = 3000;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 400 });
  await cluster.startAll();
  const seed = { NODE_PEERS: (cluster.nodes[0] as LocalNode).peerSpec };
  follower = await cluster.addNode();
  await cluster.start(follower, { ...seed, NODE_MEMPOOL__REGOSSIP_AFTER_MS: '0' });
  regossiping = await cluster.addNode();
  await cluster.start(regossiping, { ...seed, NODE_MEMPOOL__REGOSSIP_AFTER_MS: String(REGOSSIP_AFTER_MS) });
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('mempool hand-off', () => {
  it("followers' records whose gossip was lost become final: gossiped again, or handed off at a graceful stop", async () => {
    const validators = cluster.nodes.slice(0, 4) as LocalNode[];
    // Every validator knows both followers (their announcements reached node-0, and node-0's registry the others).
    await cluster.waitFor(
      'every validator to know the followers',
      () =>
        Promise.all(
          validators.map(async (v) => {
            const { peers } = (await cluster.get(v, '/peers', true)).body as { peers: string[] };
            return [follower, regossiping].every((f) => peers.some((p) => p.endsWith(`|${f.keys.publicKey}`)));
          }),
        ),
      (known) => known.every(Boolean),
    );
    for (const v of validators) await cluster.stop(v);
    const held = records('handoff', 20);
    const accepted = await cluster.post(follower, '/mempool', { records: held });
    expect(accepted.status).toBe(200);
    const again = records('regossip', 20);
    expect((await cluster.post(regossiping, '/mempool', { records: again })).status).toBe(200);
    /** How many of the holding follower's records are final (on node-1's chain). */
    const heldFinal = async () =>
      (
        await locate(
          cluster,
          validators[1] as LocalNode,
          held.map((r) => r.id),
        )
      ).size;
    await sleep(1000);
    for (const v of validators) await cluster.start(v);
    // The chain moves on without them: a record sent to a validator now is final everywhere, the follower's are not.
    const control = records('control', 5);
    await cluster.post(validators[0] as LocalNode, '/mempool', { records: control });
    await waitForRecords(
      cluster,
      validators,
      control.map((r) => r.id),
    );
    await sleep(2000);
    expect(await heldFinal()).toBe(0);
    // The regossiping follower's records become final while it runs, sent again after their wait.
    await waitForRecords(
      cluster,
      validators,
      again.map((r) => r.id),
    );
    const metrics = String((await cluster.get(regossiping, '/metrics')).body);
    expect(Number(/^scriptorium_ledger_records_regossiped_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(20);
    // The other follower's are still not final (it gossips them once): SIGTERM hands them to its peers.
    expect(await heldFinal()).toBe(0);
    expect(String((await cluster.get(follower, '/metrics')).body)).toMatch(
      /^scriptorium_ledger_records_regossiped_total 0$/m,
    );
    // SIGTERM: the follower hands its mempool to its peers before it exits.
    expect(await cluster.stop(follower, 'SIGTERM')).toBe(0);
    await waitForRecords(
      cluster,
      validators,
      held.map((r) => r.id),
    );
  });
});
