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
  type Block,
  blockHash,
  buildBlock,
  buildGenesis,
  type LightEvidence,
  lightEvidence,
  membershipBelow,
  membershipEvidence,
  membershipPointerAfter,
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

export function vectorsJson(): string {
  return `${JSON.stringify(buildVectors(), null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(VECTORS_FILE, vectorsJson());
  console.log(`wrote ${VECTORS_FILE}`);
}
