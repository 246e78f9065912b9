import { describe, expect, it } from 'vitest';
import {
  applyChanges,
  Block,
  blockHash,
  bodyRoot,
  buildBlock,
  buildGenesis,
  canonicalBytes,
  checkBody,
  checkGenesis,
  checkLink,
  createValidatorTimeline,
  genesisFileContent,
  membershipPointerAfter,
  merkleRootBytes,
  nobleSha256,
  nobleVerify,
  nodeHash,
  proofFor,
  proofShape,
  quorumSize,
  roleAt,
  roleChange,
  sealBytes,
  sha256,
  toHex,
  verifyFinality,
  verifyProof,
} from './index.ts';
import { createSigner, keyPairFromSeed } from './keys.ts';

const keys = Array.from({ length: 5 }, (_, i) => keyPairFromSeed(new Uint8Array(32).fill(i + 1)));
const pub = keys.map((k) => k.publicKey);

function seal(block: Block, signerIndexes: number[], round = 0) {
  const hash = blockHash(block.header);
  return signerIndexes.map((i) => {
    const k = keys[i] as (typeof keys)[0];
    return {
      validator: k.publicKey,
      round,
      signature: createSigner(k.privateKey).sign(sealBytes(block.header.chain_id, block.header.height, round, hash)),
    };
  });
}

describe('chain', () => {
  const genesis = buildGenesis(pub.slice(0, 4), 'test-chain');

  it('quorum = N − floor((N−1)/3)', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map(quorumSize)).toEqual([1, 2, 3, 3, 4, 5, 5, 7]);
  });

  it('genesis file content is block 0 pretty-printed with a final newline, and checkGenesis accepts it', () => {
    const text = genesisFileContent(pub.slice(0, 4), 'test-chain', 0);
    expect(text).toBe(`${JSON.stringify(genesis, null, 2)}\n`);
    expect(checkGenesis(JSON.parse(text))).toEqual({ ok: true });
    expect(checkGenesis({ ...genesis, header: { ...genesis.header, height: 1 } }).ok).toBe(false);
    const remove = { ...genesis, validator_changes: [{ action: 'REMOVE' as const, validator: pub[0] as string }] };
    expect(checkGenesis(remove).ok).toBe(false);
  });

  it('genesis holds one ADD per validator, sorted, and parses with the schema', () => {
    expect(genesis.validator_changes).toHaveLength(4);
    expect(genesis.validator_changes.every((c) => c.action === 'ADD')).toBe(true);
    expect(Block.parse(genesis)).toEqual(genesis);
    expect(checkBody(genesis)).toEqual({ ok: true });
    expect(buildGenesis([...pub.slice(0, 4)].reverse(), 'test-chain')).toEqual(genesis);
  });

  it('the block hash leaves out the round and depends on every header field', () => {
    const b = buildBlock({
      chainId: 'test-chain',
      height: 1,
      parentHash: blockHash(genesis.header),
      prevMembershipHeight: 0,
      proposer: pub[0] as string,
      timestamp: 1000,
      records: [{ id: 'r1', value: 1 }],
      changes: [],
    });
    expect(blockHash(b.header)).toMatch(/^[0-9a-f]{64}$/);
    expect(blockHash({ ...b.header, timestamp: 1001 })).not.toBe(blockHash(b.header));
    expect(checkLink(genesis, b)).toEqual({ ok: true });
    expect(checkLink(genesis, { ...b, header: { ...b.header, parent_hash: '1'.repeat(64) } }).ok).toBe(false);
    expect(checkBody({ ...b, records: [{ id: 'r1', value: 2 }] }).ok).toBe(false);
  });

  it('merkle_root joins the records tree and the changes tree under one node; proofs climb one, then cross', () => {
    const records = Array.from({ length: 5 }, (_, i) => ({ id: `r${i}` }));
    const changes = [
      { action: 'ADD' as const, validator: pub[4] as string },
      { action: 'REMOVE' as const, validator: pub[0] as string },
    ];
    const b = buildBlock({
      chainId: 'test-chain',
      height: 1,
      parentHash: blockHash(genesis.header),
      prevMembershipHeight: 0,
      proposer: pub[1] as string,
      timestamp: 1,
      records,
      changes,
    });
    const mth = (items: unknown[]) => merkleRootBytes(items.map(canonicalBytes));
    expect(b.header.merkle_root).toBe(toHex(nodeHash(mth(records), mth(changes))));
    // An empty side is SHA-256 of nothing (RFC 6962's empty tree).
    expect(bodyRoot([], [])).toBe(toHex(nodeHash(sha256(new Uint8Array(0)), sha256(new Uint8Array(0)))));
    for (let i = 0; i < records.length; i++) {
      const p = proofFor(b, i) as NonNullable<ReturnType<typeof proofFor>>;
      expect(p.proof.map((s) => s.right)).toEqual(proofShape(b.header, 'record', i));
      expect(p.proof.at(-1)).toEqual({ sibling: toHex(mth(changes)), right: true });
    }
    for (let j = 0; j < changes.length; j++) {
      const p = proofFor(b, j, 'validator_change') as NonNullable<ReturnType<typeof proofFor>>;
      expect(p.proof).toHaveLength(2);
      expect(p.proof.map((s) => s.right)).toEqual(proofShape(b.header, 'validator_change', j));
      expect(verifyProof(p)).toBe(true);
    }
  });

  it('prev_membership_height names the last earlier block with changes, and the link check enforces it', () => {
    expect(genesis.header.prev_membership_height).toBe(0);
    const child = (
      parent: Block,
      changes: Block['validator_changes'],
      pointer = membershipPointerAfter(parent.header),
    ) =>
      buildBlock({
        chainId: 'test-chain',
        height: parent.header.height + 1,
        parentHash: blockHash(parent.header),
        prevMembershipHeight: pointer,
        proposer: pub[1] as string,
        timestamp: parent.header.height + 1,
        records: [],
        changes,
      });
    const b1 = child(genesis, []);
    const b2 = child(b1, [{ action: 'ADD', validator: pub[4] as string }]);
    const b3 = child(b2, []);
    const b4 = child(b3, []);
    expect([b1, b2, b3, b4].map((b) => b.header.prev_membership_height)).toEqual([0, 0, 2, 2]);
    expect(checkLink(b3, b4)).toEqual({ ok: true });
    const skipped = child(b3, [], 0);
    expect(checkLink(b3, skipped)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/prev_membership_height/),
    });
    expect(checkGenesis({ ...genesis, header: { ...genesis.header, prev_membership_height: 1 } }).ok).toBe(false);
  });

  it('validator changes: discard ADD of present and REMOVE of absent keys', () => {
    const r = applyChanges(pub.slice(0, 4), [
      { action: 'ADD', validator: pub[0] as string },
      { action: 'REMOVE', validator: pub[4] as string },
      { action: 'ADD', validator: pub[4] as string },
      { action: 'REMOVE', validator: pub[1] as string },
    ]);
    expect(r.discarded).toHaveLength(2);
    expect(r.applied).toHaveLength(2);
    expect(r.validators).toEqual([pub[0], pub[2], pub[3], pub[4]].sort());
  });

  it('changes committed in block h take effect at h + 1; role follows membership', () => {
    const t = createValidatorTimeline(genesis);
    expect(t.at(1)).toEqual([...pub.slice(0, 4)].sort());
    const b1 = buildBlock({
      chainId: 'test-chain',
      height: 1,
      parentHash: blockHash(genesis.header),
      prevMembershipHeight: 0,
      proposer: pub[0] as string,
      timestamp: 1,
      records: [],
      changes: [
        { action: 'ADD', validator: pub[4] as string },
        { action: 'REMOVE', validator: pub[0] as string },
      ],
    });
    t.append(b1);
    expect(t.at(1)).toHaveLength(4);
    expect(t.at(2)).toEqual([pub[1], pub[2], pub[3], pub[4]].sort());
    expect(roleAt(t.at(2), pub[0] as string)).toBe('follower');
    expect(roleAt(t.at(2), pub[4] as string)).toBe('validator');
    expect(roleChange(t.at(1), t.at(2), pub[0] as string)).toBe('became-follower');
    expect(roleChange(t.at(1), t.at(2), pub[4] as string)).toBe('became-validator');
    expect(roleChange(t.at(1), t.at(2), pub[1] as string)).toBeNull();
    expect(() => t.at(3)).toThrow(RangeError);
  });

  it('verifyFinality: a quorum of valid seals of one round from the active set', () => {
    const b = buildBlock({
      chainId: 'test-chain',
      height: 1,
      parentHash: blockHash(genesis.header),
      prevMembershipHeight: 0,
      proposer: pub[0] as string,
      timestamp: 5,
      records: [],
      changes: [],
    });
    const set = [...pub.slice(0, 4)].sort();
    expect(verifyFinality({ ...b, commit_signatures: seal(b, [0, 1, 2]) }, set)).toEqual({ ok: true, round: 0 });
    expect(verifyFinality({ ...b, commit_signatures: seal(b, [0, 1]) }, set).ok).toBe(false);
    expect(verifyFinality({ ...b, commit_signatures: seal(b, [0, 1, 4]) }, set).ok).toBe(false);
    expect(verifyFinality({ ...b, commit_signatures: [...seal(b, [0, 1]), ...seal(b, [1])] }, set).ok).toBe(false);
    expect(verifyFinality({ ...b, commit_signatures: [...seal(b, [0, 1]), ...seal(b, [2], 1)] }, set).ok).toBe(false);
    const wrongRound = seal(b, [0, 1, 2], 1).map((s) => ({ ...s, round: 0 }));
    expect(verifyFinality({ ...b, commit_signatures: wrongRound }, set).ok).toBe(false);
    const other = { ...b, header: { ...b.header, timestamp: 6 } };
    expect(verifyFinality({ ...other, commit_signatures: seal(b, [0, 1, 2]) }, set).ok).toBe(false);
    // The browser-safe verifier (@noble, strict) agrees on every case.
    const cases = [
      seal(b, [0, 1, 2]),
      seal(b, [0, 1]),
      seal(b, [0, 1, 4]),
      [...seal(b, [0, 1]), ...seal(b, [1])],
      [...seal(b, [0, 1]), ...seal(b, [2], 1)],
      wrongRound,
    ];
    for (const commit_signatures of cases) {
      expect(verifyFinality({ ...b, commit_signatures }, set, nobleVerify, nobleSha256)).toEqual(
        verifyFinality({ ...b, commit_signatures }, set),
      );
    }
    expect(verifyFinality({ ...other, commit_signatures: seal(b, [0, 1, 2]) }, set, nobleVerify, nobleSha256).ok).toBe(
      false,
    );
    expect(blockHash(b.header, nobleSha256)).toBe(blockHash(b.header));
  });

  it('proofFor builds GET /proof bodies that verify offline, for records and validator changes', () => {
    const records = Array.from({ length: 7 }, (_, i) => ({ id: `rec-${i}`, entity: 'urn:x', value: i }));
    const b = buildBlock({
      chainId: 'test-chain',
      height: 1,
      parentHash: blockHash(genesis.header),
      prevMembershipHeight: 0,
      proposer: pub[0] as string,
      timestamp: 1,
      records,
      changes: [{ action: 'ADD', validator: pub[4] as string }],
    });
    for (let i = 0; i < records.length; i++) {
      const p = proofFor(b, i);
      expect(p).not.toBeNull();
      expect(verifyProof(p as NonNullable<typeof p>)).toBe(true);
    }
    // A change's leaf is its own canonical form too; it proves as the body serves it.
    const c = proofFor(b, 0, 'validator_change') as NonNullable<ReturnType<typeof proofFor>>;
    expect(c.record).toEqual({ action: 'ADD', validator: pub[4] });
    expect(verifyProof(c)).toBe(true);
    expect(verifyProof({ ...c, record: { action: 'REMOVE', validator: pub[4] } })).toBe(false);
    expect(proofFor(b, 7)).toBeNull();
    // Records and changes keep disjoint required fields: a change carrying an id, or a record without one, is refused.
    const withId = { ...b, validator_changes: [{ ...b.validator_changes[0], id: 'x' }] } as unknown as Block;
    expect(checkBody(withId)).toMatchObject({ ok: false, reason: expect.stringMatching(/other than action/) });
    expect(Block.safeParse(withId).success).toBe(false);
    const noId = { ...b, records: [{ value: 1 }, ...b.records.slice(1)] } as unknown as Block;
    expect(checkBody(noId)).toMatchObject({ ok: false });
    expect(Block.safeParse(noId).success).toBe(false);
    // Bound to the header and its hash (what the browser console checks against a finalized block).
    const p0 = proofFor(b, 0) as NonNullable<ReturnType<typeof proofFor>>;
    expect(verifyProof({ ...p0, header: b.header })).toBe(true);
    expect(verifyProof({ ...p0, header: { ...b.header, timestamp: 2 } })).toBe(false);
    expect(verifyProof({ ...p0, header: { ...b.header, merkle_root: 'a'.repeat(64) } })).toBe(false);
  });
});
