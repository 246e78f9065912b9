/**
 * Writes `ledger-vectors.json`: one file of fixtures that every verifier of the ledger is tested on (the
 * protocol's own unit tests, `ledger-node verify-proof`, the browser console in Chromium), so they cannot drift
 * apart. Deterministic: fixed keys, timestamps and records; a unit test fails when the file is stale.
 *
 *   node packages/ledger-protocol/test-vectors/generate.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ALG_COSIGNATURE_V1,
  type Block,
  blockHash,
  blockLeafData,
  buildBlock,
  buildGenesis,
  checkpointEvidence,
  cosignatureLine,
  defaultOrigin,
  formatNote,
  formatVerifierKey,
  type LightEvidence,
  LogTree,
  lightEvidence,
  logSignedCheckpoint,
  membershipBelow,
  membershipEvidence,
  membershipPointerAfter,
  parseNote,
  proofFor,
  sealBytes,
} from '../index.ts';
import { createSigner, keyPairFromSeed, type Signer } from '../keys.ts';

export const VECTORS_FILE = join(import.meta.dirname, 'ledger-vectors.json');

const CHAIN = 'vectors';
const signer = (i: number) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(0xa0 + i)).privateKey);
/**
 * Validators 0–3 at genesis; 4 joins through block 2's ADD (active from height 3); 0 leaves through block 4's REMOVE
 * (not active from height 5); 5 is never a validator; 6–9 are an attacker's keys.
 */
const keys: Signer[] = Array.from({ length: 10 }, (_, i) => signer(i));

function sealed(block: Block, by: Signer[], round = 0): Block {
  const hash = blockHash(block.header);
  const seals = by
    .map((s) => ({
      validator: s.publicKey,
      round,
      signature: s.sign(sealBytes(block.header.chain_id, block.header.height, round, hash)),
    }))
    .sort((a, b) => (a.validator < b.validator ? -1 : 1));
  return { ...block, commit_signatures: seals };
}

function next(parent: Block, records: Block['records'], changes: Block['validator_changes'], sealers: Signer[]) {
  const block = buildBlock({
    chainId: CHAIN,
    height: parent.header.height + 1,
    parentHash: blockHash(parent.header),
    prevMembershipHeight: membershipPointerAfter(parent.header),
    proposer: (sealers[0] as Signer).publicKey,
    timestamp: 1_767_225_600_000 + parent.header.height * 1000,
    records,
    changes,
  });
  return sealed(block, sealers);
}

const record = (i: number, verdict: 'OK' | 'TAMPERED') => ({
  id: `vector-${i}`,
  broker: 'https://federated.example:1026',
  entity: `urn:ngsi-ld:Room:${i}`,
  entity_type: 'Room',
  attribute: 'temperature',
  observed: { type: 'Number', value: 20 + i },
  verdict,
  seq: 0,
});

export function buildVectors() {
  const genesis = buildGenesis(
    keys.slice(0, 4).map((k) => k.publicKey),
    CHAIN,
    1_767_225_600_000,
  );
  const four = keys.slice(0, 4);
  const b1 = next(genesis, [record(1, 'OK'), record(2, 'TAMPERED'), record(3, 'OK')], [], four.slice(0, 3));
  const b2 = next(b1, [record(4, 'TAMPERED')], [{ action: 'ADD', validator: (keys[4] as Signer).publicKey }], four);
  // Height 3: five validators, quorum 4 (= 5 − floor(4/3)).
  const b3 = next(
    b2,
    [record(5, 'OK'), record(6, 'TAMPERED'), record(7, 'OK'), record(8, 'OK'), record(9, 'OK')],
    [],
    [keys[4] as Signer, ...four.slice(0, 3)],
  );
  const k = (i: number) => keys[i] as Signer;
  // Height 4: the five seal; it removes validator 0. Height 5: validators 1–4, quorum 3.
  const b4 = next(b3, [record(10, 'OK')], [{ action: 'REMOVE', validator: k(0).publicKey }], [k(1), k(2), k(3), k(4)]);
  const b5 = next(b4, [record(11, 'TAMPERED'), record(12, 'OK'), record(13, 'OK')], [], [k(1), k(2), k(4)]);
  const chain = [genesis, b1, b2, b3, b4, b5];

  const proof = (block: Block, index: number) => proofFor(block, index) as NonNullable<ReturnType<typeof proofFor>>;
  const p = proof(b3, 3);
  const proofs = [
    { name: 'a record of block 3', proof: p, valid: true },
    { name: 'the first record of block 1', proof: proof(b1, 0), valid: true },
    { name: 'the only record of block 2', proof: proof(b2, 0), valid: true },
    { name: 'a record with one value changed', proof: { ...p, record: { ...p.record, seq: 1 } }, valid: false },
    { name: 'a record with a field added', proof: { ...p, record: { ...p.record, note: 'x' } }, valid: false },
    {
      name: 'a sibling changed',
      proof: { ...p, proof: p.proof.map((s, i) => (i === 0 ? { ...s, sibling: 'f'.repeat(64) } : s)) },
      valid: false,
    },
    {
      name: 'a step on the wrong side',
      proof: { ...p, proof: p.proof.map((s, i) => (i === 1 ? { ...s, right: !s.right } : s)) },
      valid: false,
    },
    { name: 'another merkle_root', proof: { ...p, merkle_root: proof(b1, 0).merkle_root }, valid: false },
    { name: 'a step left out', proof: { ...p, proof: p.proof.slice(1) }, valid: false },
  ];

  const withSeals = (block: Block, seals: Block['commit_signatures']): Block => ({
    ...block,
    commit_signatures: seals,
  });
  const outsiderSeal = sealed(b3, [keys[5] as Signer]).commit_signatures[0] as Block['commit_signatures'][0];
  const finality = [
    { name: 'block 1: 3 of 4 seals', height: 1, block: b1, valid: true },
    { name: 'block 3: 4 of 5 seals, the set grown by block 2', height: 3, block: b3, valid: true },
    {
      name: 'block 3 with a seal removed (3 of 5, below quorum 4)',
      height: 3,
      block: withSeals(b3, b3.commit_signatures.slice(1)),
      valid: false,
    },
    {
      name: 'block 3 with a seal from a key that never was a validator',
      height: 3,
      block: withSeals(b3, [...b3.commit_signatures.slice(1), outsiderSeal]),
      valid: false,
    },
    {
      name: 'block 1 sealed by the validator block 2 adds (not active at height 1)',
      height: 1,
      block: withSeals(b1, [...b1.commit_signatures.slice(1), ...sealed(b1, [keys[4] as Signer]).commit_signatures]),
      valid: false,
    },
    {
      name: 'block 3 with a seal copied twice',
      height: 3,
      block: withSeals(b3, [
        ...b3.commit_signatures.slice(0, 3),
        b3.commit_signatures[0] as Block['commit_signatures'][0],
      ]),
      valid: false,
    },
    {
      name: 'block 3 with one header field changed (every seal signs the old hash)',
      height: 3,
      block: { ...b3, header: { ...b3.header, timestamp: b3.header.timestamp + 1 } },
      valid: false,
    },
  ];
  return {
    chain_id: CHAIN,
    genesis_hash: blockHash(genesis.header),
    chain,
    proofs,
    finality,
    light: lightVectors(chain, (i, block, round) => sealed(block, [k(i)], round).commit_signatures[0] as Seal),
    ...witnessedVectors(chain),
  };
}

type Seal = Block['commit_signatures'][0];
/** One case of light evidence: what a node serves, and the verdict against the chain's real genesis. */
export interface LightVector {
  name: string;
  height: number;
  index: number;
  evidence: LightEvidence;
  /** Block 0 as a hostile node serves it, when it differs from the real one (header kept, body swapped). */
  served_genesis?: Block;
  valid: boolean;
  /** Words the refusal must contain: it is refused for this reason, not another. */
  refusal?: string;
}

/**
 * Light evidence from the vector chain, real and forged every way we know: what GET /evidence serves, what each
 * verifier must accept (positive controls) and refuse (with the reason named in `refusal`).
 */
function lightVectors(chain: Block[], sealBy: (key: number, block: Block, round: number) => Seal): LightVector[] {
  const [genesis, b1, , b3, , b5] = chain as [Block, Block, Block, Block, Block, Block];
  const genesisHash = blockHash(genesis.header);
  const entryAt = (h: number) => membershipEvidence(chain[h] as Block);
  const real = (block: Block, index: number) =>
    lightEvidence(genesisHash, membershipBelow(block.header, entryAt), block, index) as LightEvidence;
  const e5 = real(b5, 1);
  const [m2, m4] = e5.membership as [LightEvidence['membership'][0], LightEvidence['membership'][0]];
  const withSeals = (seals: Seal[]): LightEvidence => ({ ...e5, block: { ...e5.block, commit_signatures: seals } });
  const seals5 = e5.block.commit_signatures;

  // The attack on a verifier that takes block 0 as served: block 0's real header (so its hash is the cluster's)
  // with the attacker's four keys as its body, then a block sealed by them.
  const attackerGenesis: Block = {
    ...genesis,
    validator_changes: [6, 7, 8, 9].map((i) => ({ action: 'ADD' as const, validator: (keys[i] as Signer).publicKey })),
  };
  const forgedRecord = { ...b1.records[0], id: 'invented', verdict: 'OK' } as Block['records'][0];
  const forgedBlock = next(
    { ...genesis },
    [forgedRecord],
    [],
    [6, 7, 8, 9].map((i) => keys[i] as Signer),
  );
  const forged = lightEvidence(genesisHash, [], forgedBlock, 0) as LightEvidence;

  const skipHeader = { ...e5.block.header, prev_membership_height: 2 };
  const otherChangeProof = (m2.validator_changes[0] as (typeof m2.validator_changes)[0]).proof;
  return [
    { name: 'a record of block 5, after an ADD and a REMOVE', height: 5, index: 1, evidence: e5, valid: true },
    {
      name: 'the first record of block 1 (no membership block below)',
      height: 1,
      index: 0,
      evidence: real(b1, 0),
      valid: true,
    },
    { name: 'a record of block 3, after the ADD', height: 3, index: 2, evidence: real(b3, 2), valid: true },
    {
      name: "block 0's real header with a swapped body, then a block sealed by the keys it names",
      height: 1,
      index: 0,
      evidence: forged,
      served_genesis: attackerGenesis,
      valid: false,
      refusal: 'not an active validator',
    },
    {
      name: 'a membership block omitted',
      height: 5,
      index: 1,
      evidence: { ...e5, membership: [m4] },
      valid: false,
      refusal: 'one is missing',
    },
    {
      name: 'two membership blocks swapped',
      height: 5,
      index: 1,
      evidence: { ...e5, membership: [m4, m2] },
      valid: false,
      refusal: 'out of order',
    },
    {
      name: 'a seal from a removed validator',
      height: 5,
      index: 1,
      evidence: withSeals([...seals5.slice(1), sealBy(0, b5, 0)]),
      valid: false,
      refusal: 'not an active validator',
    },
    {
      name: 'a seal of another round',
      height: 5,
      index: 1,
      evidence: withSeals([...seals5.slice(0, 2), sealBy(3, b5, 1)]),
      valid: false,
      refusal: 'other round',
    },
    {
      name: 'a header whose membership pointer skips a change',
      height: 5,
      index: 1,
      evidence: {
        ...e5,
        membership: [m2],
        block: { ...e5.block, header: skipHeader },
        proof: { ...e5.proof, block_hash: blockHash(skipHeader) },
      },
      valid: false,
      refusal: 'bad signature',
    },
    {
      name: 'a record not in the block',
      height: 5,
      index: 1,
      evidence: { ...e5, proof: { ...e5.proof, record: forgedRecord } },
      valid: false,
      refusal: 'does not hash up',
    },
    {
      name: 'a changed validator change with a valid-looking proof',
      height: 5,
      index: 1,
      evidence: {
        ...e5,
        membership: [
          m2,
          {
            ...m4,
            validator_changes: [
              { change: { action: 'REMOVE', validator: (keys[1] as Signer).publicKey }, proof: otherChangeProof },
            ],
          },
        ],
      },
      valid: false,
      refusal: 'does not hash up',
    },
    {
      name: 'a validator change left out of its membership block',
      height: 5,
      index: 1,
      evidence: { ...e5, membership: [m2, { ...m4, validator_changes: [] }] },
      valid: false,
      refusal: 'counts 1 changes',
    },
    {
      name: 'another position claimed for the record',
      height: 5,
      index: 0,
      evidence: { ...e5, proof: { ...e5.proof, index: 0 } },
      valid: false,
      refusal: 'not the path',
    },
    {
      name: 'evidence for another chain',
      height: 5,
      index: 1,
      evidence: { ...e5, genesis_hash: 'e'.repeat(64) },
      valid: false,
      refusal: 'not the pinned',
    },
  ];
}

const toHexString = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** The witnesses of the vectors: two trusted (w1, w2), one nobody trusts (rogue). */
const witnessKeys = {
  w1: signer(0x10),
  w2: signer(0x11),
  rogue: signer(0x12),
} as const;
const WITNESS_NAMES = { w1: 'witness.example/w1', w2: 'witness.example/w2', rogue: 'rogue.example/w' } as const;
const COSIGNED_AT = 1_767_225_700;

/** One case of light evidence with a checkpoint, judged under the vectors' witness policy (2 of w1, w2). */
export interface WitnessedVector {
  name: string;
  height: number;
  index: number;
  evidence: LightEvidence;
  /** Under the policy. */
  valid: boolean;
  /** Without any witness policy (everything but the cosignatures is still judged). */
  valid_without_policy: boolean;
  refusal?: string;
}

/**
 * Light evidence carrying a cosigned checkpoint of the vector chain (size 6: blocks 0–5, signed by 3 of validators 1–4,
 * cosigned by w1 and w2), real and forged: a rewritten history sealed by the same keys, cosignatures missing, forged
 * or from a witness nobody trusts, log signatures below quorum, another origin, the wrong last block.
 */
function witnessedVectors(chain: Block[]) {
  const [genesis, b1, , b3, b4, b5] = chain as [Block, Block, Block, Block, Block, Block];
  const k = (i: number) => keys[i] as Signer;
  const origin = defaultOrigin(CHAIN);
  const genesisHash = blockHash(genesis.header);
  const entryAt = (h: number) => membershipEvidence(chain[h] as Block);
  const treeOf = (blocks: Block[]) => {
    const tree = new LogTree();
    for (const b of blocks) tree.appendData(blockLeafData(blockHash(b.header)));
    return tree;
  };
  const signed = (tree: LogTree, size: number, by: Signer[], from = origin) =>
    logSignedCheckpoint(
      from,
      size,
      tree.root(size),
      by.map((s) => [s.publicKey, (m: Uint8Array) => s.sign(m)] as const),
    );
  const cosign = (note: string, by: Array<keyof typeof witnessKeys>) => {
    const parsed = parseNote(note);
    if (typeof parsed === 'string') throw new Error(parsed);
    const lines = parsed.signatures.map((s) => s.line);
    for (const w of by)
      lines.push(
        cosignatureLine(
          WITNESS_NAMES[w],
          witnessKeys[w].publicKey,
          (m) => witnessKeys[w].sign(m),
          parsed.text,
          COSIGNED_AT,
        ),
      );
    return formatNote(parsed.text, lines);
  };
  const tree = treeOf(chain);
  const note = cosign(signed(tree, 6, [k(1), k(2), k(4)]), ['w1', 'w2']);
  const evidence = (block: Block, index: number, cpNote = note, blocks = chain, size = 6): LightEvidence => {
    const t = treeOf(blocks);
    const tip = blocks[size - 1] as Block;
    return lightEvidence(
      genesisHash,
      membershipBelow(block.header, entryAt),
      block,
      index,
      undefined,
      checkpointEvidence({
        note: cpNote,
        inclusion: t.inclusion(block.header.height, size),
        tip,
        tipInclusion: t.inclusion(size - 1, size),
        membership: membershipBelow(tip.header, (h) => membershipEvidence(blocks[h] as Block)).filter(
          (m) => m.header.height >= block.header.height,
        ),
      }),
    ) as LightEvidence;
  };
  const e3 = evidence(b3, 1);
  const cp3 = e3.checkpoint as NonNullable<LightEvidence['checkpoint']>;

  // The rewrite: block 3 onwards rebuilt with another record, sealed by the same keys: final by every rule of the
  // chain, and the validators could sign its checkpoint too, but no trusted witness cosigns it.
  const r3 = next(
    chain[2] as Block,
    [{ ...b3.records[0], id: 'rewritten' } as Block['records'][0]],
    [],
    [k(4), k(0), k(1), k(2)],
  );
  const r4 = next(r3, b4.records, b4.validator_changes, [k(1), k(2), k(3), k(4)]);
  const r5 = next(r4, b5.records, [], [k(1), k(2), k(4)]);
  const rewritten = [genesis, b1, chain[2] as Block, r3, r4, r5];
  const rewrittenNote = cosign(signed(treeOf(rewritten), 6, [k(1), k(2), k(4)]), ['rogue']);
  const withNote = (n: string): LightEvidence => ({ ...e3, checkpoint: { ...cp3, note: n } });
  const forgedCosig = (() => {
    const parsed = parseNote(note);
    if (typeof parsed === 'string') throw new Error(parsed);
    // w2's line over another checkpoint's text: its key id is right, its signature is not of this text.
    const other = parseNote(cosign(signed(tree, 5, [k(1), k(2), k(4)]), ['w2']));
    if (typeof other === 'string') throw new Error(other);
    const lines = parsed.signatures.filter((s) => s.name !== WITNESS_NAMES.w2).map((s) => s.line);
    return formatNote(parsed.text, [...lines, (other.signatures.at(-1) as { line: string }).line]);
  })();
  const policy = {
    witnesses: (['w1', 'w2'] as const).map((w) => ({
      name: w,
      key: formatVerifierKey(WITNESS_NAMES[w], ALG_COSIGNATURE_V1, witnessKeys[w].publicKey),
    })),
    threshold: 2,
  };
  const vectors: WitnessedVector[] = [
    {
      name: 'a record of block 3, a checkpoint of 6 cosigned by both',
      height: 3,
      index: 1,
      evidence: e3,
      valid: true,
      valid_without_policy: true,
    },
    {
      name: "a record of the checkpoint's last block",
      height: 5,
      index: 0,
      evidence: evidence(b5, 0),
      valid: true,
      valid_without_policy: true,
    },
    {
      name: 'a record of block 1, two membership blocks above it',
      height: 1,
      index: 2,
      evidence: evidence(b1, 2),
      valid: true,
      valid_without_policy: true,
    },
    {
      name: 'no checkpoint',
      height: 3,
      index: 1,
      evidence: { ...e3, checkpoint: undefined } as LightEvidence,
      valid: false,
      valid_without_policy: true,
      refusal: 'carries no checkpoint',
    },
    {
      name: 'cosigned by w1 only',
      height: 3,
      index: 1,
      evidence: withNote(cosign(signed(tree, 6, [k(1), k(2), k(4)]), ['w1'])),
      valid: false,
      valid_without_policy: true,
      refusal: 'w2: no cosignature',
    },
    {
      name: "w2's cosignature of another checkpoint pasted in",
      height: 3,
      index: 1,
      evidence: withNote(forgedCosig),
      valid: false,
      valid_without_policy: true,
      refusal: 'w2: cosignature does not verify',
    },
    {
      name: 'the history rewritten with the same keys, the real checkpoint',
      height: 3,
      index: 0,
      evidence: evidence(r3, 0, note, rewritten),
      valid: false,
      valid_without_policy: false,
      refusal: 'another history',
    },
    {
      name: 'the history rewritten with the same keys, its own checkpoint cosigned by a witness nobody trusts',
      height: 3,
      index: 0,
      evidence: evidence(r3, 0, rewrittenNote, rewritten),
      valid: false,
      valid_without_policy: true,
      refusal: 'cosigned by 0 of the 2',
    },
    {
      name: 'log signatures of 2 validators (quorum 3)',
      height: 3,
      index: 1,
      evidence: withNote(cosign(signed(tree, 6, [k(1), k(2)]), ['w1', 'w2'])),
      valid: false,
      valid_without_policy: false,
      refusal: 'quorum is 3',
    },
    {
      name: 'a log signature of a removed validator counted toward the quorum',
      height: 3,
      index: 1,
      evidence: withNote(cosign(signed(tree, 6, [k(0), k(1), k(2)]), ['w1', 'w2'])),
      valid: false,
      valid_without_policy: false,
      refusal: 'quorum is 3',
    },
    {
      name: 'a checkpoint of another origin',
      height: 3,
      index: 1,
      evidence: withNote(cosign(signed(tree, 6, [k(1), k(2), k(4)], 'example.com/other-log'), ['w1', 'w2'])),
      valid: false,
      valid_without_policy: false,
      refusal: 'not "scriptorium.dev/ledger/vectors"',
    },
    {
      name: "block 4 given as the checkpoint's last block",
      height: 3,
      index: 1,
      evidence: { ...e3, checkpoint: { ...cp3, tip: { header: b4.header, commit_signatures: b4.commit_signatures } } },
      valid: false,
      valid_without_policy: false,
      refusal: 'its size says 5',
    },
    {
      name: 'the membership block above the record left out',
      height: 3,
      index: 1,
      evidence: { ...e3, checkpoint: { ...cp3, membership: [] } },
      valid: false,
      valid_without_policy: false,
      refusal: 'one is missing',
    },
    {
      name: 'a checkpoint that does not reach the block',
      height: 5,
      index: 0,
      evidence: {
        ...evidence(b5, 0),
        checkpoint: {
          note: cosign(signed(tree, 5, [k(1), k(2), k(4)]), ['w1', 'w2']),
          inclusion: [],
          tip: { header: b4.header, commit_signatures: b4.commit_signatures },
          tip_inclusion: tree.inclusion(4, 5).map(toHexString),
          membership: [],
        },
      },
      valid: false,
      valid_without_policy: false,
      refusal: 'does not reach block 5',
    },
  ];
  return { witness_policy: policy, witnessed: vectors };
}

export function vectorsJson(): string {
  return `${JSON.stringify(buildVectors(), null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(VECTORS_FILE, vectorsJson());
  console.log(`wrote ${VECTORS_FILE}`);
}
