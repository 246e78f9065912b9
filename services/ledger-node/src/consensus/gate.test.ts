// The gate, table-driven: every refusal it makes, at the door (`admit`) and inside the engine (`route`), and
// what it lets through.
import {
  buildGenesis,
  type ConsensusMessage,
  createValidatorTimeline,
  messageSigningBytes,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed, type Signer } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import {
  admit,
  Gate,
  type GatePosition,
  MAX_BUFFERED_PER_AUTHOR,
  MAX_HEIGHTS_AHEAD,
  MAX_ROUNDS_AHEAD,
  REJECT_REASONS,
} from './gate.ts';

const CHAIN = 'gate-test';
const signers = Array.from({ length: 5 }, (_, i) =>
  createSigner(keyPairFromSeed(new Uint8Array(32).fill(70 + i)).privateKey),
);
const [self, a, b, c, outsider] = signers as [Signer, Signer, Signer, Signer, Signer];
const members = [self, a, b, c].map((s) => s.publicKey);
const genesis = buildGenesis(members, CHAIN);
const timeline = createValidatorTimeline(genesis);

function prepare(from: Signer, over: Partial<{ height: number; round: number; chain_id: string }> = {}) {
  const u = {
    type: 'PREPARE' as const,
    chain_id: CHAIN,
    height: 1,
    round: 0,
    author: from.publicKey,
    block_hash: 'a'.repeat(64),
    ...over,
  };
  return { ...u, signature: from.sign(messageSigningBytes(u)) } as ConsensusMessage;
}

function commit(from: Signer, round: number) {
  const u = {
    type: 'COMMIT' as const,
    chain_id: CHAIN,
    height: 1,
    round,
    author: from.publicKey,
    block_hash: 'a'.repeat(64),
    seal: 'b'.repeat(128),
  };
  return { ...u, signature: from.sign(messageSigningBytes(u)) } as ConsensusMessage;
}

describe('admit (the door, before the inbound queue)', () => {
  const chain = { chainId: CHAIN, height: 0, activeSetAt: (h: number) => timeline.at(h) };
  const cases: Array<[string, unknown, string | 'ok']> = [
    ['a signed PREPARE from a member', prepare(a), 'ok'],
    ['a message for a height further ahead, checked against the next set', prepare(a, { height: 50 }), 'ok'],
    ['not an object', 'PREPARE', 'malformed'],
    ['a missing field', { ...prepare(a), block_hash: undefined }, 'malformed'],
    ['an unknown type', { ...prepare(a), type: 'VOTE' }, 'malformed'],
    ['an extra field (strict shape)', { ...prepare(a), extra: 1 }, 'malformed'],
    ['another chain', prepare(a, { chain_id: 'other-chain' }), 'wrong_chain'],
    ['a sender outside the active set', prepare(outsider), 'unknown_sender'],
    ['a changed signed field', { ...prepare(a), round: 3 }, 'bad_signature'],
    ['a signature by another member', { ...prepare(a), author: b.publicKey }, 'bad_signature'],
  ];
  it.each(cases)('%s', (_name, body, expected) => {
    const r = admit(body, chain, verifySignature);
    if (expected === 'ok') expect(r.ok).toBe(true);
    else expect(r).toMatchObject({ ok: false, reason: expected });
  });
});

describe('route (inside the engine, per message)', () => {
  const at = (over: Partial<GatePosition> = {}): GatePosition => ({
    chainId: CHAIN,
    self: self.publicKey,
    height: 1,
    round: 2,
    running: true,
    decided: false,
    members: new Set(members),
    seen: () => false,
    ...over,
  });
  const cases: Array<[string, ConsensusMessage, Partial<GatePosition>, string]> = [
    ['a PREPARE of the current round', prepare(a, { round: 2 }), {}, 'process'],
    ['a PREPARE of a later round', prepare(a, { round: 5 }), {}, 'process'],
    ['a late COMMIT of an older round (a late quorum still decides)', commit(a, 0), {}, 'process+laggard'],
    ['a future height', prepare(a, { height: 3 }), {}, 'buffered'],
    ['anything before the first start', prepare(a), { height: null }, 'buffered'],
    ['another chain', prepare(a, { chain_id: 'other-chain' }), {}, 'wrong_chain'],
    ['an old height', prepare(a, { height: 1 }), { height: 2 }, 'old_height'],
    ['a decided height', prepare(a, { round: 2 }), { decided: true }, 'old_height'],
    ['a follower of the height', prepare(a, { round: 2 }), { running: false }, 'not_validator'],
    ['this node’s own key', prepare(self, { round: 2 }), {}, 'own_key'],
    ['too many rounds ahead', prepare(a, { round: 2 + MAX_ROUNDS_AHEAD + 1 }), {}, 'too_far_ahead'],
    ['too many heights ahead', prepare(a, { height: 1 + MAX_HEIGHTS_AHEAD + 1 }), {}, 'too_far_ahead'],
    ['a sender outside this height’s set', prepare(outsider, { round: 2 }), {}, 'unknown_sender'],
    [
      'a bad signature',
      { ...prepare(a, { round: 2 }), block_hash: 'c'.repeat(64) } as ConsensusMessage,
      {},
      'bad_signature',
    ],
    ['a second PREPARE of the same author and round', prepare(a, { round: 2 }), { seen: () => true }, 'duplicate'],
    ['a PREPARE of a round already left', prepare(a, { round: 1 }), {}, 'old_round+laggard'],
  ];
  it.each(cases)('%s', (_name, msg, position, expected) => {
    const r = new Gate(verifySignature).route(msg, at(position));
    const [kind, flag] = expected.split('+');
    if (kind === 'process' || kind === 'buffered') expect(r.kind).toBe(kind);
    else expect(r).toMatchObject({ kind: 'reject', reason: kind });
    if (r.kind !== 'buffered') expect(r.laggard).toBe(flag === 'laggard');
  });

  it('every reason the gate can give is in REJECT_REASONS (the metric label set)', () => {
    const given = new Set(cases.map(([, , , e]) => e.split('+')[0]));
    for (const reason of given)
      if (reason !== 'process' && reason !== 'buffered') expect(REJECT_REASONS).toContain(reason);
  });

  it('buffers per author up to the cap, then refuses; releases a height and drops lower ones', () => {
    const gate = new Gate(verifySignature);
    for (let r = 0; r < MAX_BUFFERED_PER_AUTHOR; r++)
      expect(gate.route(prepare(a, { height: 3, round: r }), at()).kind).toBe('buffered');
    expect(gate.route(prepare(a, { height: 3, round: 999 }), at())).toMatchObject({ reason: 'buffer_full' });
    expect(gate.route(prepare(b, { height: 2 }), at()).kind).toBe('buffered');
    expect(gate.buffered).toBe(MAX_BUFFERED_PER_AUTHOR + 1);
    expect(gate.release(3)).toHaveLength(MAX_BUFFERED_PER_AUTHOR);
    expect(gate.buffered).toBe(0); // height 2 was below the released height: dropped
    expect(gate.route(prepare(a, { height: 4 }), at()).kind).toBe('buffered');
  });
});
