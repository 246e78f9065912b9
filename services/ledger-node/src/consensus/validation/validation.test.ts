import {
  blockHash,
  buildBlock,
  buildGenesis,
  type CommitMessage,
  type ConsensusMessage,
  createValidatorTimeline,
  messageSigningBytes,
  type PrePrepareMessage,
  type PrepareMessage,
  quorumSize,
  type RoundChangeMessage,
  roundChangeCore,
  sealBytes,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { heightContextAfter, proposerFor } from '../proposer.ts';
import type { ValidationContext } from './context.ts';
import { checkCarried, validateCommit, validatePrePrepare, validateRoundChange } from './index.ts';

const CHAIN = 'validation-test';
const all = Array.from({ length: 5 }, (_, i) =>
  createSigner(keyPairFromSeed(new Uint8Array(32).fill(90 + i)).privateKey),
);
const validators = all.slice(0, 4);
const outsider = all[4] as (typeof all)[0];
const genesis = buildGenesis(
  validators.map((s) => s.publicKey),
  CHAIN,
);
const ctx = heightContextAfter(genesis, createValidatorTimeline(genesis));
const v: ValidationContext = {
  chainId: CHAIN,
  ctx,
  members: new Set(ctx.validators),
  quorum: quorumSize(4),
  verify: verifySignature,
};
const byKey = (pk: string) => all.find((s) => s.publicKey === pk) as (typeof all)[0];
const proposerOf = (round: number) => byKey(proposerFor(ctx, round));

function sign<T extends ConsensusMessage>(signer: (typeof all)[0], unsigned: Omit<T, 'signature'>): T {
  return { ...unsigned, signature: signer.sign(messageSigningBytes(unsigned as unknown as ConsensusMessage)) } as T;
}
const block = (proposer: string, ts: number) =>
  buildBlock({
    chainId: CHAIN,
    height: 1,
    parentHash: ctx.parentHash,
    prevMembershipHeight: ctx.prevMembershipHeight,
    proposer,
    timestamp: ts,
    records: [],
    changes: [],
  });
const prepare = (s: (typeof all)[0], round: number, hash: string, height = 1) =>
  sign<PrepareMessage>(s, { type: 'PREPARE', chain_id: CHAIN, height, round, author: s.publicKey, block_hash: hash });
function roundChange(s: (typeof all)[0], round: number, prepared?: { round: number; block: ReturnType<typeof block> }) {
  const hash = prepared ? blockHash(prepared.block.header) : null;
  const m = sign<RoundChangeMessage>(s, {
    type: 'ROUND_CHANGE',
    chain_id: CHAIN,
    height: 1,
    round,
    author: s.publicKey,
    prepared_round: prepared ? prepared.round : null,
    prepared_hash: hash,
  });
  if (!prepared || !hash) return m;
  return {
    ...m,
    prepared_block: prepared.block,
    prepares: validators.slice(0, 3).map((p) => prepare(p, prepared.round, hash)),
  };
}
function prePrepare(s: (typeof all)[0], round: number, b: ReturnType<typeof block>, rcs?: RoundChangeMessage[]) {
  const m = sign<PrePrepareMessage>(s, {
    type: 'PRE-PREPARE',
    chain_id: CHAIN,
    height: 1,
    round,
    author: s.publicKey,
    block_hash: blockHash(b.header),
    block: b,
  } as Omit<PrePrepareMessage, 'signature'>);
  if (!rcs) return m;
  const highest = rcs
    .filter((r) => r.prepared_round !== null)
    .sort((a, c) => (c.prepared_round ?? 0) - (a.prepared_round ?? 0))[0];
  return { ...m, justification: { round_changes: rcs.map(roundChangeCore), prepares: highest?.prepares ?? [] } };
}

describe('justification checks', () => {
  it('accepts a round-0 PRE-PREPARE from the proposer, rejects one from another validator', () => {
    const p0 = proposerOf(0);
    expect(validatePrePrepare(v, prePrepare(p0, 0, block(p0.publicKey, 1)))).toEqual({ ok: true });
    const other = validators.find((s) => s !== p0) as (typeof all)[0];
    const r = validatePrePrepare(v, prePrepare(other, 0, block(other.publicKey, 1)));
    expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/not the proposer/) });
  });

  it('a carried message (inside a certificate): refuses a non-validator author, a bad signature, a wrong height and a wrong chain', () => {
    const b = block(outsider.publicKey, 1);
    expect(checkCarried(v, prepare(outsider, 0, blockHash(b.header)))).toMatchObject({ ok: false });
    const good = prepare(validators[0] as (typeof all)[0], 0, blockHash(b.header));
    expect(checkCarried(v, good)).toEqual({ ok: true });
    expect(checkCarried(v, { ...good, round: 1 })).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(checkCarried(v, prepare(validators[0] as (typeof all)[0], 0, blockHash(b.header), 2))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/wrong height/),
    });
    expect(checkCarried(v, { ...good, chain_id: 'other' })).toMatchObject({ ok: false, reason: 'wrong chain id' });
  });

  it('checks the commit seal, not only the message signature', () => {
    const s = validators[0] as (typeof all)[0];
    const hash = blockHash(block(s.publicKey, 1).header);
    const seal = s.sign(sealBytes(CHAIN, 1, 0, hash));
    const base = {
      type: 'COMMIT',
      chain_id: CHAIN,
      height: 1,
      round: 0,
      author: s.publicKey,
      block_hash: hash,
    } as const;
    expect(validateCommit(v, sign<CommitMessage>(s, { ...base, seal }))).toEqual({ ok: true });
    const wrongSeal = s.sign(sealBytes(CHAIN, 1, 1, hash));
    expect(validateCommit(v, sign<CommitMessage>(s, { ...base, seal: wrongSeal }))).toMatchObject({
      ok: false,
      reason: 'bad commit seal',
    });
  });

  it('ROUND_CHANGE: valid prepared certificate passes; short, duplicate, wrong-round or wrong-block ones fail', () => {
    const p0 = proposerOf(0);
    const b = block(p0.publicKey, 7);
    const hash = blockHash(b.header);
    const s = validators[1] as (typeof all)[0];
    const good = roundChange(s, 1, { round: 0, block: b }) as RoundChangeMessage;
    expect(validateRoundChange(v, good)).toEqual({ ok: true });
    const two = validators.slice(0, 2).map((p) => prepare(p, 0, hash));
    expect(validateRoundChange(v, { ...good, prepares: two })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/quorum/),
    });
    const dup = [two[0], two[0], two[1]] as PrepareMessage[];
    expect(validateRoundChange(v, { ...good, prepares: dup })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/duplicate/),
    });
    const wrongRound = validators.slice(0, 3).map((p) => prepare(p, 1, hash));
    expect(validateRoundChange(v, { ...good, prepares: wrongRound })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/another round/),
    });
    const otherHash = blockHash(block(p0.publicKey, 8).header);
    const wrongBlock = validators.slice(0, 3).map((p) => prepare(p, 0, otherHash));
    expect(validateRoundChange(v, { ...good, prepares: wrongBlock })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/another block/),
    });
    const withOutsider = [...validators.slice(0, 2).map((p) => prepare(p, 0, hash)), prepare(outsider, 0, hash)];
    expect(validateRoundChange(v, { ...good, prepares: withOutsider })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not an active/),
    });
    expect(validateRoundChange(v, { ...good, prepared_block: block(p0.publicKey, 9) })).toMatchObject({ ok: false });
    // prepared round must be below the target round
    const same = roundChange(s, 1, { round: 1, block: b });
    expect(validateRoundChange(v, same)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/below the target/),
    });
  });

  it('PRE-PREPARE after a round change: needs a quorum certificate and must re-propose the highest prepared value', () => {
    const r = 2;
    const p = proposerOf(r);
    const prepared = block(proposerOf(0).publicKey, 11);
    const fresh = block(p.publicKey, 12);
    const none = validators.slice(0, 3).map((s) => roundChange(s, r));
    expect(validatePrePrepare(v, prePrepare(p, r, fresh, none))).toEqual({ ok: true });
    // Missing certificate, too few round changes, duplicate authors, round changes of another round.
    expect(validatePrePrepare(v, prePrepare(p, r, fresh))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/without a round-change/),
    });
    expect(validatePrePrepare(v, prePrepare(p, r, fresh, none.slice(0, 2)))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/quorum/),
    });
    const dupl = [none[0], none[0], none[1]] as RoundChangeMessage[];
    expect(validatePrePrepare(v, prePrepare(p, r, fresh, dupl))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/duplicate/),
    });
    const wrongRound = validators.slice(0, 3).map((s) => roundChange(s, 1));
    expect(validatePrePrepare(v, prePrepare(p, r, fresh, wrongRound))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/another round/),
    });

    // One round change is prepared at round 1 on `prepared`, another at round 0 on a different block.
    const older = block(proposerOf(0).publicKey, 13);
    const mixed = [
      roundChange(validators[0] as (typeof all)[0], r, { round: 1, block: prepared }),
      roundChange(validators[1] as (typeof all)[0], r, { round: 0, block: older }),
      roundChange(validators[2] as (typeof all)[0], r),
    ];
    expect(validatePrePrepare(v, prePrepare(p, r, prepared, mixed))).toEqual({ ok: true });
    // Wrong re-proposal: a new block, or the lower prepared block.
    expect(validatePrePrepare(v, prePrepare(p, r, fresh, mixed))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/highest prepared/),
    });
    expect(validatePrePrepare(v, prePrepare(p, r, older, mixed))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/highest prepared/),
    });
    // Right block, but a bad prepared certificate (only two PREPAREs).
    const good = prePrepare(p, r, prepared, mixed);
    const bad = {
      ...good,
      justification: {
        round_changes: good.justification?.round_changes ?? [],
        prepares: (good.justification?.prepares ?? []).slice(0, 2),
      },
    };
    expect(validatePrePrepare(v, bad)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/prepared certificate/),
    });
    // Wrong proposer for the round, with an otherwise valid certificate.
    const notProposer = validators.find((s) => s !== p) as (typeof all)[0];
    expect(validatePrePrepare(v, prePrepare(notProposer, r, prepared, mixed))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/not the proposer/),
    });
  });

  it('rejects a proposal whose block does not fit the height (parent, height, seals, body)', () => {
    const p0 = proposerOf(0);
    const b = block(p0.publicKey, 1);
    const wrongParent = { ...b, header: { ...b.header, parent_hash: 'f'.repeat(64) } };
    expect(validatePrePrepare(v, prePrepare(p0, 0, wrongParent))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/parent/),
    });
    const badBody = { ...b, records: [{ id: 'x' }] };
    expect(validatePrePrepare(v, prePrepare(p0, 0, badBody))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/count|merkle/),
    });
    const seal = [{ validator: p0.publicKey, round: 0, signature: 'a'.repeat(128) }];
    expect(validatePrePrepare(v, prePrepare(p0, 0, { ...b, commit_signatures: seal }))).toMatchObject({ ok: false });
  });

  it('the application check applies to new blocks only, never to a prepared block being re-proposed', () => {
    const strict: ValidationContext = { ...v, checkProposal: () => 'local policy says no' };
    const p0 = proposerOf(0);
    expect(validatePrePrepare(strict, prePrepare(p0, 0, block(p0.publicKey, 1)))).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/local policy/),
    });
    const r = 2;
    const p = proposerOf(r);
    const prepared = block(p0.publicKey, 21);
    const rcs = [
      roundChange(validators[0] as (typeof all)[0], r, { round: 1, block: prepared }),
      roundChange(validators[1] as (typeof all)[0], r),
      roundChange(validators[2] as (typeof all)[0], r),
    ];
    expect(validateRoundChange(strict, rcs[0] as RoundChangeMessage)).toEqual({ ok: true });
    expect(validatePrePrepare(strict, prePrepare(p, r, prepared, rcs))).toEqual({ ok: true });
    const none = validators.slice(0, 3).map((s) => roundChange(s, r));
    expect(validatePrePrepare(strict, prePrepare(p, r, block(p.publicKey, 22), none))).toMatchObject({ ok: false });
  });
});
