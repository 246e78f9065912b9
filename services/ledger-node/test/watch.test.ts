// The ledger doing its job: four real node processes watch one primary and two federated test brokers.
// A tamper on one federated broker → exactly one TAMPERED record in the chain, read back by every node,
// with a proof that verifies; the same value seen again → no new record; restored → one OK record.
// Notifications: a real webhook receiver and a real syslog receiver get the TAMPERED record once its
// block is final (the event names a block that carries its finality certificate), with a signature that
// verifies; a receiver that fails for a while still gets it; kill -9 of the block's proposer → another
// validator delivers.
import { readFileSync } from 'node:fs';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import {
  attribute,
  entityId,
  seed,
  setAttribute,
  startTestBroker,
  type TestBroker,
} from '@scriptorium/harness/test-broker';
import {
  type ReceivedWebhook,
  type SyslogReceiver,
  startSyslogReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@scriptorium/harness/test-receivers';
import {
  type Block,
  blockHash,
  type LightEvidence,
  quorumSize,
  verifyLightEvidence,
  verifyProof,
} from '@scriptorium/ledger-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from './helpers.ts';

const ENTITIES = 30;
const ATTRS = 3;
const SECRET = 'whsec_watch_test_0123456789';

interface Rec {
  id: string;
  broker?: string;
  entity?: string;
  attribute?: string | null;
  verdict?: string;
  seq?: number;
  observed?: { value?: unknown } | null;
}

let cluster: LocalCluster;
let primary: TestBroker;
let fedA: TestBroker;
let fedB: TestBroker;
let webhook: WebhookReceiver;
let syslog: SyslogReceiver;

/** Every record on a node's chain with its height and index. */
async function chainRecords(node: LocalNode): Promise<Array<{ h: number; i: number; r: Rec; block: Block }>> {
  const out: Array<{ h: number; i: number; r: Rec; block: Block }> = [];
  const height = await cluster.height(node);
  for (let h = 1; h <= height; h++) {
    const block = (await cluster.get(node, `/blocks/${h}`)).body as Block;
    block.records.forEach((r, i) => {
      out.push({ h, i, r: r as Rec, block });
    });
  }
  return out;
}

const isFor = (entity: string, value?: number) => (x: { r: Rec }) =>
  x.r.entity === entity && x.r.attribute === 'temperature' && (value === undefined || x.r.observed?.value === value);

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

describe.each(['udp', 'tcp'] as const)(
  'four nodes watching three brokers, syslog over %s',
  { timeout: 180_000 },
  (protocol) => {
    beforeAll(async () => {
      primary = await startTestBroker();
      fedA = await startTestBroker();
      fedB = await startTestBroker();
      for (const b of [primary, fedA, fedB]) seed(b, { count: ENTITIES, attrs: ATTRS });
      webhook = await startWebhookReceiver({ secret: SECRET });
      syslog = await startSyslogReceiver(protocol);
      cluster = await LocalCluster.create({
        size: 4,
        roundTimeoutMs: 1000,
        env: {
          NODE_BROKER__PRIMARY_URL: primary.url,
          NODE_BROKER__FEDERATED_URLS: `${fedA.url},${fedB.url}`,
          NODE_BROKER__POLL_INTERVAL_MS: '1000',
          NODE_NOTIFY__WEBHOOK_URLS: webhook.url,
          NODE_NOTIFY__WEBHOOK_SECRET: SECRET,
          NODE_NOTIFY__SYSLOG: syslog.target,
          NODE_NOTIFY__TAKEOVER_GRACE_MS: '1500',
          NODE_SYNC__INTERVAL_MS: '300',
        },
      });
      await cluster.startAll();
    });

    afterAll(async () => {
      await cluster?.stopAll();
      await webhook?.close();
      await syslog?.close();
      for (const b of [primary, fedA, fedB]) await b?.close();
    });

    it('the first pass notarises every observation as OK, once, on every node', async () => {
      const expected = 2 * ENTITIES * ATTRS;
      for (const node of cluster.nodes) {
        const records = await until(`${expected} OK records on ${node.nodeId}`, async () => {
          const all = await chainRecords(node);
          return all.length >= expected ? all : undefined;
        });
        expect(records).toHaveLength(expected);
        expect(records.every((x) => x.r.verdict === 'OK')).toBe(true);
        expect(new Set(records.map((x) => x.r.id)).size).toBe(expected);
      }
      // The chain can hold every record (gossiped by the other nodes) before node 0 has finished its own first
      // read, which starts only once it is synced: wait for that read, then judge it.
      const brokers = await until('node 0 to finish reading the three brokers', async () => {
        const watch = (await cluster.get(cluster.nodes[0] as LocalNode, '/watch')).body as {
          watcher: { brokers: Array<{ ok: boolean; entities?: number; reason?: string }> };
        };
        const read = watch.watcher.brokers;
        return read.every((b) => b.ok || b.reason !== undefined) ? read : undefined;
      });
      expect(brokers.map((b) => [b.ok, b.entities])).toEqual([
        [true, ENTITIES],
        [true, ENTITIES],
        [true, ENTITIES],
      ]);
    });

    let tamperedBlock: { h: number; i: number; r: Rec; block: Block } | undefined;

    it('a tamper → exactly one TAMPERED record, the same on every node, with a proof that verifies', async () => {
      setAttribute(fedA, entityId(7), 'temperature', attribute('ngsi-v2', 7, 0, -777));
      const n0 = cluster.nodes[0] as LocalNode;
      tamperedBlock = await until('the TAMPERED record on node 0', async () =>
        (await chainRecords(n0)).find((x) => isFor(entityId(7), -777)(x) && x.r.verdict === 'TAMPERED'),
      );
      expect(tamperedBlock.r).toMatchObject({ broker: fedA.url, seq: 1, observed: { type: 'Number', value: -777 } });
      await sleep(3000); // three more passes: the same value is not recorded again
      for (const node of cluster.nodes) {
        await until(
          `${node.nodeId} at height ${tamperedBlock.h}`,
          async () => (await cluster.height(node)) >= (tamperedBlock?.h ?? 0),
        );
        const hits = (await chainRecords(node)).filter((x) => isFor(entityId(7))(x) && x.r.verdict === 'TAMPERED');
        expect(hits.map((x) => [x.h, x.i, x.r.id])).toEqual([[tamperedBlock.h, tamperedBlock.i, tamperedBlock.r.id]]);
        const proof = (await cluster.get(node, `/proof/${tamperedBlock.h}/${tamperedBlock.i}`)).body as {
          record: Rec;
          proof: Array<{ sibling: string; right: boolean }>;
          merkle_root: string;
        };
        expect(verifyProof({ record: proof.record, proof: proof.proof, merkle_root: proof.merkle_root })).toBe(true);
        expect(proof.merkle_root).toBe(tamperedBlock.block.header.merkle_root);
      }
    });

    it('the webhook and syslog get it once its block is final, signed, once per cluster', async () => {
      const t = tamperedBlock as NonNullable<typeof tamperedBlock>;
      const got = await until('the webhook', async () => webhook.received.find((w) => w.body.id === t.r.id));
      expect(got.verified).toBe(true);
      expect(got.idempotencyKey).toBe(t.r.id);
      expect(got.body).toMatchObject({ type: 'tamper', height: t.h, block_hash: blockHash(t.block.header) });
      // The block it names is final: it carries a quorum of commit seals.
      expect(t.block.commit_signatures.length).toBeGreaterThanOrEqual(quorumSize(4));
      // It carries the record's light evidence, which verifies from the genesis file alone, as GET /evidence serves it.
      const genesis = JSON.parse(readFileSync(cluster.genesisFile, 'utf8')) as Block;
      const kept = verifyLightEvidence(got.body.evidence, genesis);
      expect(kept.ok, kept.lines.join('; ')).toBe(true);
      expect(got.body.evidence.proof).toMatchObject({ height: t.h, index: t.i, record: got.body.record });
      // The same as GET /evidence serves, but for the certificate (each node keeps the quorum of seals it collected)
      // and the checkpoint: the notification leaves at finality, before any checkpoint covers the block, and the
      // node serves one once it holds it.
      const served = (await cluster.get(cluster.nodes[1] as LocalNode, `/evidence/${t.h}/${t.i}`))
        .body as LightEvidence;
      const unsealed = ({ checkpoint: _checkpoint, ...e }: LightEvidence) => ({
        ...e,
        block: { ...e.block, commit_signatures: [] },
      });
      expect(unsealed(got.body.evidence)).toEqual(unsealed(served));
      const servedReport = verifyLightEvidence(served, genesis);
      expect(servedReport.ok, servedReport.lines.join('; ')).toBe(true);
      const msg = await until('the syslog message', async () =>
        syslog.messages.find((m) => m.structuredData['tamper@32473']?.record_id === t.r.id),
      );
      expect(msg.structuredData['tamper@32473']).toMatchObject({
        height: String(t.h),
        verdict: 'TAMPERED',
        entity: entityId(7),
      });
      // Syslog carries the same evidence (the tamper fits one UDP datagram here).
      const carried = JSON.parse(msg.structuredData['tamper@32473']?.evidence ?? 'null');
      expect(verifyLightEvidence(carried, genesis).ok).toBe(true);
      expect(syslog.errors).toEqual([]);
      await sleep(4000); // past every backup's grace period
      expect(webhook.received.filter((w) => w.body.id === t.r.id)).toHaveLength(1);
      // No notification for OK records.
      expect(webhook.received.every((w: ReceivedWebhook) => w.body.record.verdict === 'TAMPERED')).toBe(true);
    });

    it('restored → one OK record with the next sequence number', async () => {
      setAttribute(fedA, entityId(7), 'temperature', attribute('ngsi-v2', 7, 0));
      const n0 = cluster.nodes[0] as LocalNode;
      const ok = await until('the OK record', async () => {
        const hits = (await chainRecords(n0)).filter(
          (x) => isFor(entityId(7))(x) && x.r.verdict === 'OK' && (x.r.seq ?? 0) > 0,
        );
        return hits.length > 0 ? hits : undefined;
      });
      await sleep(3000);
      const again = (await chainRecords(n0)).filter((x) => isFor(entityId(7))(x) && (x.r.seq ?? 0) > 0);
      expect(again.map((x) => [x.r.verdict, x.r.seq])).toEqual([
        ['TAMPERED', 1],
        ['OK', 2],
      ]);
      expect(ok).toHaveLength(1);
    });

    it('a receiver down while the block is final, and kill -9 of its proposer: another validator delivers', async () => {
      webhook.failNext(1_000_000);
      setAttribute(fedB, entityId(11), 'temperature', attribute('ngsi-v2', 11, 0, -1111));
      const n0 = cluster.nodes[0] as LocalNode;
      const hit = await until('the second TAMPERED record', async () =>
        (await chainRecords(n0)).find((x) => isFor(entityId(11), -1111)(x) && x.r.verdict === 'TAMPERED'),
      );
      const proposer = cluster.nodes.find((n) => n.keys.publicKey === hit.block.header.proposer) as LocalNode;
      await cluster.stop(proposer, 'SIGKILL');
      const killedAt = Date.now();
      webhook.failNext(0);
      const got = await until(
        'delivery by another validator',
        async () => webhook.received.find((w) => w.body.id === hit.r.id),
        60_000,
      );
      expect(got.verified).toBe(true);
      expect(got.at).toBeGreaterThanOrEqual(killedAt);
      expect(got.body.height).toBe(hit.h);
    });
  },
);
