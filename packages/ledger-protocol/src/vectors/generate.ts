/**
 * Writes `ledger-vectors.json`: one file of fixtures that every verifier of the ledger is tested on (the
 * protocol's own unit tests, `ledger-node verify-proof`, the browser console in Chromium), so they cannot drift
 * apart. Deterministic: fixed keys, timestamps and records; a unit test fails when the file is stale.
 *
 *   node packages/ledger-protocol/test-vectors/generate.ts
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Block, blockHash, buildBlock, buildGenesis, proofFor, sealBytes } from '../index.ts';
import { createSigner, keyPairFromSeed, type Signer } from '../keys.ts';

export const VECTORS_FILE = join(import.meta.dirname, 'ledger-vectors.json');

const CHAIN = 'vectors';
const signer = (i: number) => createSigner(keyPairFromSeed(new Uint8Array(32).fill(0xa0 + i)).privateKey);
/** Validators 0–3 at genesis; 4 joins through block 2's ADD (active from height 3); 5 is never a validator. */
const keys: Signer[] = Array.from({ length: 6 }, (_, i) => signer(i));

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
  const chain = [genesis, b1, b2, b3];

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
  return { chain_id: CHAIN, genesis_hash: blockHash(genesis.header), chain, proofs, finality };
}

export function vectorsJson(): string {
  return `${JSON.stringify(buildVectors(), null, 2)}\n`;
}

if (import.meta.main) {
  writeFileSync(VECTORS_FILE, vectorsJson());
  console.log(`wrote ${VECTORS_FILE}`);
}
