import { describe, expect, it } from 'vitest';
import {
  BACKUP_FORMAT,
  type BackupManifest,
  BackupVerifier,
  type Block,
  blockHash,
  buildBlock,
  buildGenesis,
  parseManifest,
  sealBytes,
  segmentKey,
  sha256Hex,
} from './index.ts';
import { createSigner, keyPairFromSeed } from './keys.ts';

const keys = Array.from({ length: 4 }, (_, i) => keyPairFromSeed(new Uint8Array(32).fill(i + 11)));
const genesis = buildGenesis(
  keys.map((k) => k.publicKey),
  'backup-chain',
  1000,
);

function sealed(block: Block): Block {
  const hash = blockHash(block.header);
  const seals = keys.slice(0, 3).map((k) => ({
    validator: k.publicKey,
    round: 0,
    signature: createSigner(k.privateKey).sign(sealBytes(block.header.chain_id, block.header.height, 0, hash)),
  }));
  return { ...block, commit_signatures: seals };
}

const chain: Block[] = [genesis];
for (let h = 1; h <= 5; h++) {
  const parent = chain[h - 1] as Block;
  chain.push(
    sealed(
      buildBlock({
        chainId: 'backup-chain',
        height: h,
        parentHash: blockHash(parent.header),
        prevMembershipHeight: 0,
        proposer: (keys[h % 4] as (typeof keys)[0]).publicKey,
        timestamp: 1000 + h,
        records: [{ id: `r${h}`, value: h }],
        changes: [],
      }),
    ),
  );
}

/** Two segments: blocks 0-2 and 3-5, the bytes being their JSON lines. */
function backupOf(blocks: Block[]): { manifest: BackupManifest; bytes: Buffer[] } {
  const parts = [blocks.slice(0, 3), blocks.slice(3)];
  const bytes = parts.map((p) => Buffer.from(p.map((b) => JSON.stringify(b)).join('\n')));
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    chain_id: 'backup-chain',
    genesis_hash: blockHash(genesis.header),
    height: 5,
    tip_hash: blockHash((blocks[5] as Block).header),
    records: 5,
    created_at: new Date(0).toISOString(),
    segments: parts.map((p, i) => {
      const from = (p[0] as Block).header.height;
      const to = (p.at(-1) as Block).header.height;
      const b = bytes[i] as Buffer;
      return {
        key: segmentKey(from, to),
        from,
        to,
        sha256: sha256Hex(b),
        bytes: b.length,
        records: p.reduce((n, x) => n + x.records.length, 0),
        last_hash: blockHash((p.at(-1) as Block).header),
      };
    }),
  };
  return { manifest, bytes };
}

function verify(manifest: BackupManifest, bytes: Buffer[], blocks: unknown[][] | undefined = undefined) {
  const v = new BackupVerifier(manifest, genesis);
  const start = v.start();
  if (!start.ok) return start;
  for (const [i, s] of manifest.segments.entries()) {
    const b = v.segmentBytes(s, bytes[i] as Buffer);
    if (!b.ok) return b;
    const list =
      blocks?.[i] ??
      (bytes[i] as Buffer)
        .toString('utf8')
        .split('\n')
        .map((l) => JSON.parse(l));
    for (const block of list) {
      const step = v.block(block);
      if (!step.ok) return step;
    }
  }
  return v.finish();
}

describe('backup format', () => {
  it('segment keys sort by height', () => {
    expect(segmentKey(0, 511)).toBe('segments/000000000000-000000000511.ndjson.gz');
  });

  it('a good backup verifies; its manifest parses', () => {
    const { manifest, bytes } = backupOf(chain);
    expect(parseManifest(JSON.stringify(manifest))).toEqual({ ok: true, manifest });
    expect(verify(manifest, bytes)).toEqual({ ok: true });
  });

  it('a manifest with a gap, an overlap or a wrong height is refused before any segment is read', () => {
    const { manifest } = backupOf(chain);
    const gap = {
      ...manifest,
      segments: [manifest.segments[0], { ...manifest.segments[1], from: 4, key: segmentKey(4, 5) }],
    };
    expect(parseManifest(JSON.stringify(gap))).toMatchObject({
      ok: false,
      height: 3,
      reason: expect.stringMatching(/gap/),
    });
    expect(parseManifest(JSON.stringify({ ...manifest, height: 9 }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/end at block 5/),
    });
    expect(parseManifest('{')).toMatchObject({ ok: false, reason: 'the manifest is not JSON' });
    expect(parseManifest(JSON.stringify({ ...manifest, format: 'x' }))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/malformed: format/),
    });
  });

  it('refuses a changed byte, a lying hash, a forged record, a missing seal, another chain — with the height', () => {
    const { manifest, bytes } = backupOf(chain);
    const flipped = Buffer.from(bytes[1] as Buffer);
    flipped[10] = (flipped[10] as number) ^ 1;
    expect(verify(manifest, [bytes[0] as Buffer, flipped])).toMatchObject({
      ok: false,
      height: 3,
      reason: expect.stringMatching(/SHA-256/),
    });

    // The hash updated to match a forged record: the chain verifier finds it (the body no longer has its root).
    const forged = chain.map((b) => (b.header.height === 4 ? { ...b, records: [{ id: 'r4', value: 'forged' }] } : b));
    const f = backupOf(forged);
    expect(verify(f.manifest, f.bytes)).toMatchObject({ ok: false, height: 4, reason: expect.stringMatching(/root/i) });

    // Seals below a quorum.
    const weak = chain.map((b) =>
      b.header.height === 2 ? { ...b, commit_signatures: b.commit_signatures.slice(0, 2) } : b,
    );
    const w = backupOf(weak);
    expect(verify(w.manifest, w.bytes)).toMatchObject({
      ok: false,
      height: 2,
      reason: expect.stringMatching(/finality/),
    });

    const other = { ...manifest, genesis_hash: 'a'.repeat(64) };
    expect(verify(other, bytes)).toMatchObject({
      ok: false,
      height: 0,
      reason: expect.stringMatching(/another chain/),
    });

    // A segment that ends early, and a tip the manifest does not name.
    const short = backupOf(chain);
    const lines = [[...chain.slice(0, 3)], [...chain.slice(3, 5)]];
    expect(verify(short.manifest, short.bytes, lines)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/ended early/),
    });
    const lie = { ...short.manifest, tip_hash: 'b'.repeat(64) };
    expect(verify(lie, short.bytes)).toMatchObject({
      ok: false,
      height: 5,
      reason: expect.stringMatching(/last block's hash|tip/),
    });
  });
});
