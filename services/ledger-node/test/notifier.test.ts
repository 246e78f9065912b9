// Four validators' notifiers over the same finalized blocks and one real webhook receiver: in the healthy
// case the receiver gets each TAMPERED record once (from the block's proposer); with the proposer down, the
// next validator delivers after one grace period; OK records are never notified; a block is notified only
// through onFinalized; the proof in the body verifies against the block.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWebhookReceiver, type WebhookReceiver } from '@scriptorium/harness/test-receivers';
import { type Block, blockHash, buildBlock, lightEvidence, verifyProof } from '@scriptorium/ledger-protocol';
import { generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRecord } from '../src/broker/index.ts';
import { notifyConfig } from '../src/notify/config.ts';
import { Notifier } from '../src/notify/index.ts';
import { sleep } from './helpers.ts';

const keys = [0, 1, 2, 3].map(() => generateKeyPair().publicKey).sort();
const SECRET = 'whsec_notifier_test_secret';
const dirs: string[] = [];
let receiver: WebhookReceiver | undefined;
const GENESIS_HASH = 'e'.repeat(64);
const notifiers: Notifier[] = [];

afterEach(async () => {
  for (const n of notifiers.splice(0)) await n.stop().catch(() => undefined);
  await receiver?.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function block(height: number, proposer: string, verdicts: Array<'OK' | 'TAMPERED'>): Block {
  const records = verdicts.map((verdict, i) =>
    buildRecord(
      { broker: 'https://fed1.example:1026' },
      { id: `urn:ngsi-ld:Sensor:${height}-${i}`, type: 'Sensor' },
      {
        attribute: 'temperature',
        observed: verdict === 'OK' ? '{"type":"Number","value":1}' : '{"type":"Number","value":-9}',
        verdict,
      },
      0,
    ),
  );
  return buildBlock({
    chainId: 'notify-test',
    height,
    parentHash: '0'.repeat(64),
    prevMembershipHeight: 0,
    proposer,
    timestamp: 1_764_000_000_000 + height,
    records,
    changes: [],
  });
}

/** Four notifiers; `askDelivered` reaches the others directly (a down one does not answer). */
function cluster(url: string, graceMs: number, down: Set<string> = new Set()): Map<string, Notifier> {
  const byKey = new Map<string, Notifier>();
  const config = notifyConfig({
    NODE_NOTIFY__WEBHOOK_URLS: url,
    NODE_NOTIFY__WEBHOOK_SECRET: SECRET,
    NODE_NOTIFY__TAKEOVER_GRACE_MS: graceMs,
  } as unknown as Parameters<typeof notifyConfig>[0]);
  for (const self of keys) {
    const dataDir = mkdtempSync(join(tmpdir(), 'notifier-'));
    dirs.push(dataDir);
    const n = Notifier.create({
      config,
      dataDir,
      self,
      chainId: 'notify-test',
      backoffBaseMs: 20,
      backoffMaxMs: 100,
      ports: {
        activeSetAt: () => keys,
        // These blocks are not a sealed chain: the evidence is only checked for the record's Merkle proof here
        // (the real cluster's evidence is verified from its genesis in watch.test.ts).
        evidenceFor: (block, index) => lightEvidence(GENESIS_HASH, [], block, index),
        askDelivered: async (validator, eventId, sink) =>
          down.has(validator) ? undefined : byKey.get(validator)?.deliveredBy(eventId, sink),
      },
    }) as Notifier;
    notifiers.push(n);
    byKey.set(self, n);
  }
  return byKey;
}

async function until(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('notifier: once per cluster, after finality', () => {
  it('healthy: the proposer delivers each TAMPERED record once; backups find it delivered; OK is never sent', async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
    // A grace the proposer's delivery cannot outlast even on a loaded machine: a backup that asked before the
    // proposer had delivered would deliver too (that is the at-least-once rule, not the healthy case).
    const nodes = cluster(receiver.url, 1500);
    for (const n of nodes.values()) n.start();
    const b = block(5, keys[2] as string, ['OK', 'TAMPERED', 'OK', 'TAMPERED']);
    for (const n of nodes.values()) n.onFinalized(b);
    await until(
      'both delivered and every queue drained',
      () => [...nodes.values()].every((n) => n.queue.size === 0) && receiver?.received.length === 2,
    );
    await sleep(400); // every backup has asked and found it delivered: still exactly two deliveries
    expect(receiver.received).toHaveLength(2);
    expect(receiver.keys()).toEqual(new Set([b.records[1]?.id, b.records[3]?.id]));
    for (const got of receiver.received) {
      expect(got.verified).toBe(true);
      expect(got.body).toMatchObject({
        type: 'tamper',
        chain_id: 'notify-test',
        height: 5,
        block_hash: blockHash(b.header),
      });
      expect(got.body.record.verdict).toBe('TAMPERED');
      const proof = got.body.evidence.proof;
      expect(proof.record).toEqual(got.body.record);
      expect(verifyProof({ record: got.body.record, proof: proof.proof, merkle_root: b.header.merkle_root })).toBe(
        true,
      );
      expect(got.body.index).toBe(proof.index);
    }
    expect(nodes.get(keys[2] as string)?.deliveredBy(b.records[1]?.id as string, `webhook:${receiver.url}`)).toBe(true);
    // The same block again (a restart replaying the chain) queues nothing.
    for (const n of nodes.values()) n.onFinalized(b);
    expect([...nodes.values()].every((n) => n.queue.size === 0)).toBe(true);
  });

  it('the proposer down: the next validator delivers after one grace period (at least once)', async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
    const proposer = keys[1] as string;
    const nodes = cluster(receiver.url, 400, new Set([proposer]));
    const started = Date.now();
    for (const [key, n] of nodes) if (key !== proposer) n.start();
    const b = block(9, proposer, ['TAMPERED']);
    for (const [key, n] of nodes) if (key !== proposer) n.onFinalized(b);
    await until('delivered by a backup', () => receiver?.received.length === 1);
    expect((receiver.received[0]?.at ?? 0) - started).toBeGreaterThanOrEqual(380);
    await sleep(1000); // ranks 2 and 3 ask rank 1, which delivered
    expect(receiver.received).toHaveLength(1);
    expect(nodes.get(keys[2] as string)?.deliveredBy(b.records[0]?.id as string, `webhook:${receiver.url}`)).toBe(true);
  });

  it('a receiver that fails for a while still gets it', async () => {
    receiver = await startWebhookReceiver({ secret: SECRET });
    receiver.failNext(5);
    const nodes = cluster(receiver.url, 60_000);
    for (const n of nodes.values()) n.start();
    const b = block(3, keys[0] as string, ['TAMPERED']);
    for (const n of nodes.values()) n.onFinalized(b);
    await until('delivered after failures', () => receiver?.received.length === 1, 20_000);
    expect(receiver.received[0]?.verified).toBe(true);
  });
});
