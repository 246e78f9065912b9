import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  blockHash,
  buildBlock,
  buildGenesis,
  type ConsensusMessage,
  createValidatorTimeline,
  fromHex,
  membershipPointerAfter,
  messageSigningBytes,
  parseMessage,
  safeParseMessage,
  sealBytes,
  verifyMessage,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine } from './engine.ts';
import { heightContextAfter } from './proposer.ts';
import type { EngineAction } from './types.ts';

ed.hashes.sha512 = sha512;
const CHAIN = 'msg-test';
const signers = Array.from({ length: 4 }, (_, i) =>
  createSigner(keyPairFromSeed(new Uint8Array(32).fill(60 + i)).privateKey),
);

/** Every message a 4-node cluster signs while deciding two heights. */
function producedMessages(): ConsensusMessage[] {
  const genesis = buildGenesis(
    signers.map((s) => s.publicKey),
    CHAIN,
  );
  const nodes = signers.map((s) => ({
    s,
    e: createEngine({ chainId: CHAIN, self: s.publicKey, sign: s.sign, baseTimeoutMs: 50 }),
    t: createValidatorTimeline(genesis),
    tip: genesis,
  }));
  const all: ConsensusMessage[] = [];
  const queue: Array<[(typeof nodes)[0], ConsensusMessage]> = [];
  const run = (n: (typeof nodes)[0], acts: EngineAction[]): void => {
    for (const a of acts) {
      if (a.type === 'broadcast') {
        all.push(a.msg);
        for (const o of nodes) if (o !== n) queue.push([o, a.msg]);
      } else if (a.type === 'request-proposal') {
        const block = buildBlock({
          chainId: CHAIN,
          height: a.height,
          parentHash: blockHash(n.tip.header),
          prevMembershipHeight: membershipPointerAfter(n.tip.header),
          proposer: n.s.publicKey,
          timestamp: a.height,
          records: [{ id: `x${a.height}`, v: 'é' }],
          changes: [],
        });
        run(n, n.e.step({ type: 'proposal-ready', height: a.height, round: a.round, block }));
      } else if (a.type === 'finalize' && a.block.header.height < 2) {
        n.tip = a.block;
        n.t.append(a.block);
        run(n, n.e.step({ type: 'start', ctx: heightContextAfter(a.block, n.t) }));
      }
    }
  };
  for (const n of nodes) run(n, n.e.step({ type: 'start', ctx: heightContextAfter(genesis, n.t) }));
  while (queue.length > 0) {
    const [n, m] = queue.shift() as [(typeof nodes)[0], ConsensusMessage];
    run(n, n.e.step({ type: 'message', msg: m }));
  }
  return all;
}

describe('consensus messages', () => {
  const produced = producedMessages();

  it('node:crypto and @noble/ed25519 (strict) agree on every signature and seal the engines make', () => {
    expect(produced.length).toBe(18); // two heights: 1 PRE-PREPARE + 4 PREPARE + 4 COMMIT each
    for (const m of produced) {
      expect(verifyMessage(m)).toBe(true);
      expect(ed.verify(fromHex(m.signature), messageSigningBytes(m), fromHex(m.author), { zip215: false })).toBe(true);
      if (m.type === 'COMMIT') {
        const bytes = sealBytes(m.chain_id, m.height, m.round, m.block_hash);
        expect(ed.verify(fromHex(m.seal), bytes, fromHex(m.author), { zip215: false })).toBe(true);
      }
    }
  });

  it('every produced message survives a JSON round trip through parseMessage unchanged', () => {
    for (const m of produced) expect(parseMessage(JSON.parse(JSON.stringify(m)))).toEqual(m);
  });

  it('a changed signed field breaks the signature', () => {
    const m = produced.find((x) => x.type === 'PREPARE') as ConsensusMessage;
    expect(verifyMessage({ ...m, round: m.round + 1 })).toBe(false);
    expect(verifyMessage({ ...m, chain_id: 'other' })).toBe(false);
    expect(
      verifyMessage({
        ...m,
        author:
          signers[3]?.publicKey === m.author ? (signers[2]?.publicKey as string) : (signers[3]?.publicKey as string),
      }),
    ).toBe(false);
  });

  it('fuzz: the parser never throws unexpectedly on arbitrary JSON or mutated messages', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const r = safeParseMessage(value);
        expect(typeof r.success).toBe('boolean');
      }),
      { numRuns: 500, seed: 1 },
    );
    fc.assert(
      fc.property(fc.constantFrom(...produced), fc.string(), fc.jsonValue(), (m, key, value) => {
        const mutated = { ...(m as Record<string, unknown>), [key]: value };
        const r = safeParseMessage(mutated);
        if (r.success) {
          // Whatever still parses is either the same message or fails its signature check.
          const same = JSON.stringify(r.data) === JSON.stringify(m);
          const extrasOnly = ['block', 'justification', 'prepared_block', 'prepares'].includes(key);
          if (!same && !extrasOnly) expect(verifyMessage(r.data)).toBe(false);
        }
      }),
      { numRuns: 500, seed: 2 },
    );
  });
});
