// The Merkle leaf as the spec states it: "its canonical byte form is the Merkle leaf" and "hashing the record's
// canonical form up through the steps must give merkle_root". A real proof from a running node, checked with
// nothing of the ledger's code: RFC 8785 for these records (strings and integers) by hand, SHA-256 from
// node:crypto, RFC 6962 prefixes, the steps walked up to merkle_root, then to the block's header and hash.
import { createHash } from 'node:crypto';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, waitForRecords } from './helpers.ts';

/** RFC 8785 for JSON made of objects, strings and safe integers: keys sorted by UTF-16 code units, no spaces. */
function jcs(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null)
    return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jcs).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs(obj[k])}`).join(',')}}`;
}

const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();

let cluster: LocalCluster;
let node: LocalNode;

beforeAll(async () => {
  cluster = await LocalCluster.create({ size: 1, debugApi: true, roundTimeoutMs: 1000 });
  await cluster.startAll();
  node = cluster.nodes[0] as LocalNode;
});
afterAll(async () => {
  await cluster?.stopAll();
});

describe('the Merkle leaf is SHA-256(0x00 ‖ JCS(record))', () => {
  it('a proof from a running node walks by hand from the record to merkle_root and to the block hash', async () => {
    const records = Array.from({ length: 7 }, (_, i) => ({
      id: `leaf-${i}`,
      entity: 'urn:ngsi-ld:Room:é-1', // non-ASCII: JCS bytes are UTF-8
      attribute: 'temperature',
      value: 20 + i,
      verdict: i % 2 === 0 ? 'OK' : 'TAMPERED',
      broker: 'https://federated.example',
    }));
    const posted = await cluster.post(node, '/mempool', { records });
    expect(posted.status).toBe(200);
    await waitForRecords(
      cluster,
      [node],
      records.map((r) => r.id),
    );
    // Find record 5 on the chain, then ask for its proof.
    let height = 0;
    let index = -1;
    for (let h = 1; index < 0; h++) {
      const block = (await cluster.get(node, `/blocks/${h}`)).body as { records: Array<{ id: string }> };
      index = block.records.findIndex((r) => r.id === 'leaf-5');
      height = h;
    }
    const res = await cluster.get(node, `/proof/${height}/${index}`);
    expect(res.status).toBe(200);
    const proof = res.body as {
      merkle_root: string;
      block_hash: string;
      record: Record<string, unknown>;
      proof: Array<{ sibling: string; right: boolean }>;
    };
    expect(proof.record).toEqual(records[5]);

    let acc = sha256(Buffer.of(0x00), Buffer.from(jcs(proof.record), 'utf8'));
    for (const step of proof.proof) {
      const sibling = Buffer.from(step.sibling, 'hex');
      acc = step.right ? sha256(Buffer.of(0x01), acc, sibling) : sha256(Buffer.of(0x01), sibling, acc);
    }
    expect(acc.toString('hex')).toBe(proof.merkle_root);

    // The root is the block's, and the block's header hashes to the proof's block_hash.
    const block = (await cluster.get(node, `/blocks/${height}`)).body as { header: Record<string, unknown> };
    expect(block.header.merkle_root).toBe(proof.merkle_root);
    expect(sha256(Buffer.from(jcs(block.header), 'utf8')).toString('hex')).toBe(proof.block_hash);

    // verify-proof agrees, and refuses the record with one value changed.
    const ok = runCli(['verify-proof', '-'], JSON.stringify(proof));
    expect(ok.status, ok.stderr).toBe(0);
    const bad = runCli(['verify-proof', '-'], JSON.stringify({ ...proof, record: { ...proof.record, value: 99 } }));
    expect(bad.status).toBe(1);
  });
});
