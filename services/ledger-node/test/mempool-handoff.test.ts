// A node that stops gracefully hands the records it accepted, and no block holds yet, to its peers: a follower takes
// records while every validator is down (its gossip of them is lost), the validators come back and make blocks
// without them (only the follower holds them, and a follower never proposes), then the follower gets SIGTERM and
// the records become final. With SIGKILL instead they would be lost, as the crash test says.
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { locate, records, sleep, waitForRecords } from './helpers.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let cluster: LocalCluster;
let follower: LocalNode;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 400 });
  await cluster.startAll();
  follower = await cluster.addNode();
  await cluster.start(follower, { NODE_PEERS: (cluster.nodes[0] as LocalNode).peerSpec });
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('mempool hand-off', () => {
  it("a follower's records, whose gossip was lost, become final when it stops gracefully", async () => {
    const validators = cluster.nodes.slice(0, 4) as LocalNode[];
    // Every validator knows the follower (its announcements reached node-0, and node-0's registry the others).
    await cluster.waitFor(
      'every validator to know the follower',
      () =>
        Promise.all(
          validators.map(async (v) =>
            ((await cluster.get(v, '/peers', true)).body as { peers: string[] }).peers.some((p) =>
              p.endsWith(`|${follower.keys.publicKey}`),
            ),
          ),
        ),
      (known) => known.every(Boolean),
    );
    for (const v of validators) await cluster.stop(v);
    const held = records('handoff', 20);
    const accepted = await cluster.post(follower, '/mempool', { records: held });
    expect(accepted.status).toBe(200);
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
    expect(
      (
        await locate(
          cluster,
          validators[1] as LocalNode,
          held.map((r) => r.id),
        )
      ).size,
    ).toBe(0);
    // SIGTERM: the follower hands its mempool to its peers before it exits.
    expect(await cluster.stop(follower, 'SIGTERM')).toBe(0);
    await waitForRecords(
      cluster,
      validators,
      held.map((r) => r.id),
    );
  });
});
