import {
  ALG_COSIGNATURE_V1,
  type Block,
  blockHash,
  buildBlock,
  buildGenesis,
  cosignatureLine,
  formatNote,
  formatVerifierKey,
  membershipPointerAfter,
  parseNote,
  sealBytes,
  verifyLightEvidence,
  verifySignature,
  witnessPolicy,
} from '@scriptorium/ledger-protocol';
import { createSigner, keyPairFromSeed, type Signer } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { MemoryBlockStore } from '../../sim/storage.ts';
import { ChainState } from '../node/chain-state.ts';
import { CheckpointBook } from './book.ts';

const signer = (i: number) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(i)).privateKey);
const validators = [1, 2, 3, 4].map(signer);
const [w1, w2] = [signer(0x21), signer(0x22)];
const WITNESSES = [
  {
    name: 'w1',
    url: 'http://127.0.0.1:1',
    key: formatVerifierKey('witness.test/w1', ALG_COSIGNATURE_V1, w1.publicKey),
  },
  {
    name: 'w2',
    url: 'http://127.0.0.1:2',
    key: formatVerifierKey('witness.test/w2', ALG_COSIGNATURE_V1, w2.publicKey),
  },
];

/** A chain of `n` blocks after genesis, sealed by three of the four validators; `salt` makes another history. */
function chainOf(n: number, salt = ''): ChainState {
  const genesis = buildGenesis(
    validators.map((v) => v.publicKey),
    'book-test',
    1,
  );
  const chain = ChainState.open(new MemoryBlockStore(), genesis);
  for (let h = 1; h <= n; h++) {
    const parent = chain.tip();
    const block = buildBlock({
      chainId: 'book-test',
      height: h,
      parentHash: blockHash(parent.header),
      prevMembershipHeight: membershipPointerAfter(parent.header),
      proposer: (validators[0] as Signer).publicKey,
      timestamp: 1000 + h,
      records: [{ id: `r${h}${salt}`, v: h }],
      changes: [],
    });
    const hash = blockHash(block.header);
    chain.append({
      ...block,
      commit_signatures: validators.slice(0, 3).map((v) => ({
        validator: v.publicKey,
        round: 0,
        signature: v.sign(sealBytes('book-test', h, 0, hash)),
      })),
    });
  }
  return chain;
}

function bookOf(chain: ChainState, self: Signer | undefined = validators[0]) {
  return new CheckpointBook({
    origin: 'scriptorium.dev/ledger/book-test',
    chain,
    witnesses: WITNESSES,
    threshold: 2,
    signer: self,
    verify: verifySignature,
  });
}

/** A log-signed checkpoint of `size` from three validators' books on the same chain. */
function logSigned(chain: ChainState, size: number, by = validators.slice(0, 3)): string {
  const lines = by.map((v) => bookOf(chain, v).sign(size));
  return formatNote(bookOf(chain).text(size), lines);
}

function cosign(note: string, witnesses: Array<[Signer, string]>, time = 1_800_000_000): string {
  const parsed = parseNote(note);
  if (typeof parsed === 'string') throw new Error(parsed);
  return formatNote(parsed.text, [
    ...parsed.signatures.map((s) => s.line),
    ...witnesses.map(([w, name]) => cosignatureLine(name, w.publicKey, (m) => w.sign(m), parsed.text, time)),
  ]);
}

const policy = witnessPolicy(WITNESSES);
if (typeof policy === 'string') throw new Error(policy);

describe('the checkpoint book', () => {
  it('keeps a log-signed checkpoint of its own chain; the evidence carries it, judged without a policy', () => {
    const chain = chainOf(6);
    const book = bookOf(chain);
    expect(book.accept(logSigned(chain, 7))).toEqual({ status: 'kept', size: 7, cosigners: [] });
    expect(book.latestSize).toBe(7);
    expect(book.witnessedSize).toBe(0);
    const evidence = { ...chain.evidence(3, 0), checkpoint: book.evidence(3) };
    const report = verifyLightEvidence(evidence, chain.get(0) as Block);
    expect(report.ok, report.lines.join('\n')).toBe(true);
    expect(verifyLightEvidence(evidence, chain.get(0) as Block, undefined, undefined, { policy }).lines.at(-1)).toMatch(
      /cosigned by 0 of the 2/,
    );
    expect(book.status()).toMatchObject({
      size: 7,
      witnessed_size: 0,
      unwitnessed_since: (chain.get(0) as Block).header.timestamp,
    });
  });

  it('cosignatures of both witnesses: witnessed, served, and the evidence meets the 2-of-2 policy', () => {
    const chain = chainOf(6);
    const book = bookOf(chain);
    const note = cosign(logSigned(chain, 7), [
      [w1 as Signer, 'witness.test/w1'],
      [w2 as Signer, 'witness.test/w2'],
    ]);
    expect(book.accept(note)).toMatchObject({ status: 'kept', cosigners: ['w1', 'w2'] });
    expect(book.witnessedSize).toBe(7);
    expect(book.current()).toBe(note);
    const report = verifyLightEvidence(
      { ...chain.evidence(5, 0), checkpoint: book.evidence(5) },
      chain.get(0) as Block,
      undefined,
      undefined,
      { policy },
    );
    expect(report.ok, report.lines.join('\n')).toBe(true);
    expect(book.status()).toMatchObject({ witnessed_size: 7, unwitnessed_since: null });
    expect(book.status().witnesses.map((w) => [w.name, w.size, w.cosigned_at])).toEqual([
      ['w1', 7, 1_800_000_000],
      ['w2', 7, 1_800_000_000],
    ]);
  });

  it('merges the cosignatures of one checkpoint from two rounds; keeps the witnessed one when a later is not', () => {
    const chain = chainOf(8);
    const book = bookOf(chain);
    book.accept(cosign(logSigned(chain, 5), [[w1 as Signer, 'witness.test/w1']]));
    expect(book.witnessedSize).toBe(0);
    expect(book.accept(cosign(logSigned(chain, 5), [[w2 as Signer, 'witness.test/w2']])).status).toBe('kept');
    expect(book.witnessedSize).toBe(5);
    // A later checkpoint only w1 cosigned: the latest, but what is served stays the witnessed one.
    book.accept(cosign(logSigned(chain, 9), [[w1 as Signer, 'witness.test/w1']]));
    expect(book.latestSize).toBe(9);
    expect(book.current()?.split('\n')[1]).toBe('5');
    // Evidence of block 3 uses the witnessed checkpoint; of block 7, the latest (nothing witnessed covers it).
    expect(book.evidence(3)?.note.split('\n')[1]).toBe('5');
    expect(book.evidence(7)?.note.split('\n')[1]).toBe('9');
    expect(book.status().witnesses.map((w) => w.size)).toEqual([9, 5]);
  });

  it('refuses a split view (another root for a size it has), a checkpoint below quorum, one of another origin', () => {
    const chain = chainOf(6);
    const other = chainOf(6, '-rewritten');
    const book = bookOf(chain);
    const split = book.accept(cosign(logSigned(other, 7), [[w1 as Signer, 'witness.test/w1']]));
    expect(split).toMatchObject({ status: 'conflict', size: 7 });
    expect(book.accept(logSigned(chain, 7, validators.slice(0, 2)))).toMatchObject({
      status: 'invalid',
      reason: expect.stringMatching(/quorum is 3/),
    });
    const foreign = logSigned(chain, 7).replaceAll('scriptorium.dev/ledger/book-test', 'example.com/log');
    expect(book.accept(foreign).status).toBe('invalid');
    expect(book.accept(logSigned(chain, 7).replace('\n7\n', '\n70\n'))).toMatchObject({ status: 'ahead' });
    expect(book.latestSize).toBe(0);
    expect(book.current()).toBeUndefined();
  });

  it('drops cosignatures that do not verify and lines of unknown keys', () => {
    const chain = chainOf(4);
    const book = bookOf(chain);
    const stranger = signer(0x33);
    const note = cosign(logSigned(chain, 5), [
      [stranger, 'witness.test/w1'],
      [stranger, 'stranger.test/w'],
      [w2 as Signer, 'witness.test/w2'],
    ]);
    expect(book.accept(note)).toMatchObject({ status: 'kept', cosigners: ['w2'] });
    expect(book.current()).not.toContain('stranger.test/w');
  });

  it('signs only sizes it has, and only with a key', () => {
    const chain = chainOf(3);
    expect(() => bookOf(chain).sign(5)).toThrow(/no checkpoint of size 5/);
    expect(() =>
      new CheckpointBook({
        ...{ origin: 'o', chain, witnesses: [], threshold: 0, verify: verifySignature },
        signer: undefined,
      }).sign(2),
    ).toThrow(/no validator key/);
  });
});
