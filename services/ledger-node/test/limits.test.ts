// The documented statuses on a real node process: 401, 413, 400, 503 (inbound queue full), 429.

import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { messageSigningBytes } from '@scriptorium/ledger-protocol';
import { createSigner } from '@scriptorium/ledger-protocol/keys';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { records, waitForRecords } from './helpers.ts';

// Real processes on a shared 2-core machine: generous limits (and never timed assertions).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let cluster: LocalCluster;
let node: LocalNode;

beforeAll(async () => {
  cluster = await LocalCluster.create({
    size: 1,
    roundTimeoutMs: 400,
    env: { MAX_BODY_BYTES: '2048', NODE_CONSENSUS__INBOUND_QUEUE: '1' },
  });
  node = cluster.nodes[0] as LocalNode;
  await cluster.startAll();
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('limits and statuses', () => {
  it('401 without the token, 413 above MAX_BODY_BYTES, 400 for malformed payloads', async () => {
    const noToken = await cluster.post(
      node,
      '/mempool',
      { records: [] },
      { authorization: 'Bearer nope-nope-nope-nope' },
    );
    expect(noToken).toEqual({ status: 401, body: { error: 'token missing or invalid' } });
    const big = await cluster.post(node, '/mempool', { records: [{ id: 'x', pad: 'p'.repeat(4000) }] });
    expect(big).toEqual({ status: 413, body: { error: 'payload above MAX_BODY_BYTES' } });
    const bad = await cluster.post(node, '/consensus', { type: 'PREPARE', height: 'one' });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/malformed/);
  });

  it('a single validator finalizes on its own', async () => {
    const batch = records('solo', 3);
    expect((await cluster.post(node, '/mempool', { records: batch })).status).toBe(200);
    await waitForRecords(
      cluster,
      [node],
      batch.map((r) => r.id),
    );
  });

  it('503 when the inbound queue is full', async () => {
    const signer = createSigner(node.keys.privateKey);
    const chainId = JSON.parse((await import('node:fs')).readFileSync(cluster.genesisFile, 'utf8')).header
      .chain_id as string;
    const messages = Array.from({ length: 400 }, (_, i) => {
      const unsigned = {
        type: 'PREPARE' as const,
        chain_id: chainId,
        height: 100_000 + i,
        round: 0,
        author: node.keys.publicKey,
        block_hash: 'ab'.repeat(32),
      };
      return { ...unsigned, signature: signer.sign(messageSigningBytes(unsigned)) };
    });
    const results = await Promise.all(messages.map((m) => cluster.post(node, '/consensus', m)));
    const codes = new Set(results.map((r) => r.status));
    expect(codes.has(503)).toBe(true);
    expect(codes.has(200)).toBe(true);
    expect([...codes].every((c) => c === 200 || c === 503)).toBe(true);
    expect(results.find((r) => r.status === 503)?.body).toEqual({ error: 'inbound queue full' });
    const metrics = String((await cluster.get(node, '/metrics')).body);
    expect(metrics).toMatch(/scriptorium_ledger_rejected_messages_total\{reason="queue_full"\} [1-9]/);
  });

  it('a forged signature is refused at the gate', async () => {
    const chain = (await cluster.get(node, '/chain')).body as { height: number };
    const forged = {
      type: 'PREPARE',
      chain_id: 'scriptorium-local',
      height: chain.height + 1,
      round: 0,
      author: node.keys.publicKey,
      block_hash: 'cd'.repeat(32),
      signature: 'ef'.repeat(64),
    };
    const res = await cluster.post(node, '/consensus', forged);
    expect(res.status).toBe(400);
    expect((res.body as { error: string }).error).toMatch(/bad_signature/);
  });

  it('429 once a source exhausts its bucket', async () => {
    const limited = await LocalCluster.create({
      size: 1,
      env: { NODE_RATE_LIMIT__RPS: '1', NODE_RATE_LIMIT__BURST: '60' },
    });
    try {
      await limited.startAll();
      const target = limited.nodes[0] as LocalNode;
      const results = await Promise.all(Array.from({ length: 100 }, () => limited.get(target, '/chain')));
      const limitedOne = results.find((r) => r.status === 429);
      expect(limitedOne?.body).toEqual({ error: 'rate limit exceeded' });
      expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(60);
    } finally {
      await limited.stopAll();
    }
  });

  it('SIGTERM drains and exits 0, and the node restarts on its data', async () => {
    const height = await cluster.height(node);
    expect(await cluster.stop(node, 'SIGTERM')).toBe(0);
    await cluster.start(node);
    expect(await cluster.height(node)).toBeGreaterThanOrEqual(height);
  });
});
