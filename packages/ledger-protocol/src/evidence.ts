/**
 * One verdict on what a reader holds, the same in every verifier (`ledger-node verify-proof`, the browser console,
 * the kubectl plugin, the tests on the shared vectors):
 * - light evidence (GET /evidence): judged by `verifyLightEvidence` against the pinned genesis, which it requires;
 * - a Merkle proof (GET /proof) alone: the record hashes up to `merkle_root` (and, with `header`, to that header
 *   and `block_hash`); nothing says the block is final;
 * - a chain (blocks 0..h): every block from 1 links to its parent, matches its body and carries a finality
 *   certificate from the set active at its height, derived from block 0 and the changes of the blocks before it;
 * - both: the chain holds, the proof's block is in it (same hash), and the record proves against it.
 * With a pinned genesis, a chain's block 0 must be it; without one, block 0 is taken as given (compare
 * `genesisHash` with the cluster's genesis).
 */
import { verifySignature } from '#platform-crypto';
import { blockHash } from './block.ts';
import { MerkleProofBody } from './bodies.ts';
import { ChainVerifier } from './chain-verify.ts';
import type { WitnessRequirement } from './checkpoint-evidence.ts';
import type { EvidenceReport } from './evidence-walk.ts';
import type { Verify } from './finality.ts';
import { LIGHT_EVIDENCE_FORMAT, verifyLightEvidence } from './light-evidence.ts';
import type { Sha256 } from './merkle.ts';
import { verifyProof } from './proof.ts';
import { Block } from './schemas.ts';

export interface VerifyEvidenceOptions {
  /** The chain's block 0 as the reader knows it (the cluster's genesis file): required for light evidence. */
  genesis?: Block;
  verify?: Verify;
  sha?: Sha256;
  /**
   * The reader's witness policy: then only light evidence carrying a checkpoint cosigned by enough of the trusted
   * witnesses is valid (a proof or a chain alone says nothing about what the witnesses saw).
   */
  witnesses?: WitnessRequirement;
}

type Evidence = { proof?: MerkleProofBody & { header?: unknown }; chain?: Block[] };

/** Reads evidence: a proof body, an array of blocks, or `{proof, chain}`; a string on a shape it cannot read. */
export function parseEvidence(input: unknown): Evidence | string {
  const asChain = (v: unknown): Block[] | string => {
    if (!Array.isArray(v) || v.length === 0) return 'chain: expected a non-empty array of blocks (block 0 first)';
    const blocks: Block[] = [];
    for (let i = 0; i < v.length; i++) {
      const parsed = Block.safeParse(v[i]);
      if (!parsed.success)
        return `chain: block ${i}: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`;
      blocks.push(parsed.data);
    }
    return blocks;
  };
  const asProof = (v: unknown): Evidence['proof'] | string => {
    const parsed = MerkleProofBody.safeParse(v);
    if (!parsed.success)
      return `proof: expected {height, index, merkle_root, block_hash, record, proof}: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`;
    const header = (v as { header?: unknown }).header;
    return header === undefined ? parsed.data : { ...parsed.data, header };
  };
  if (Array.isArray(input)) {
    const chain = asChain(input);
    return typeof chain === 'string' ? chain : { chain };
  }
  if (typeof input !== 'object' || input === null)
    return 'expected a proof, a chain (array of blocks) or {proof, chain}';
  const o = input as { proof?: unknown; chain?: unknown };
  if (o.chain !== undefined) {
    const chain = asChain(o.chain);
    if (typeof chain === 'string') return chain;
    if (o.proof === undefined) return { chain };
    const proof = asProof(o.proof);
    return typeof proof === 'string' ? proof : { proof, chain };
  }
  const proof = asProof(input);
  return typeof proof === 'string' ? proof : { proof };
}

/** True when `input` claims to be light evidence (its `format`), whatever else it holds. */
export function isLightEvidence(input: unknown): boolean {
  return (
    typeof input === 'object' && input !== null && (input as { format?: unknown }).format === LIGHT_EVIDENCE_FORMAT
  );
}

/**
 * Verifies evidence (see the file's comment). Never throws on bad input: a shape it cannot read is a failed report.
 * @example verifyEvidence(JSON.parse(text), { genesis }).ok
 */
export function verifyEvidence(input: unknown, options: VerifyEvidenceOptions = {}): EvidenceReport {
  const { genesis: pinned, verify = verifySignature, sha, witnesses } = options;
  if (isLightEvidence(input)) {
    if (pinned === undefined)
      return { ok: false, lines: ['light evidence is verified against a pinned genesis block: give the genesis file'] };
    return verifyLightEvidence(input, pinned, verify, sha, witnesses);
  }
  if (witnesses !== undefined)
    return {
      ok: false,
      lines: [
        'a witness policy is met only by light evidence (GET /evidence) carrying a cosigned checkpoint; a proof or a chain alone says nothing about what the witnesses saw',
      ],
    };
  const evidence = parseEvidence(input);
  if (typeof evidence === 'string') return { ok: false, lines: [`unreadable: ${evidence}`] };
  const lines: string[] = [];
  const report: EvidenceReport = { ok: false, lines };
  const { proof, chain } = evidence;

  if (chain) {
    const [genesis, ...rest] = chain as [Block, ...Block[]];
    let verifier: ChainVerifier;
    try {
      verifier = new ChainVerifier(genesis, verify, sha);
    } catch (err) {
      lines.push(`block 0: ${(err as Error).message}`);
      return report;
    }
    report.genesisHash = verifier.genesisHash;
    if (pinned !== undefined) {
      const pinnedHash = blockHash(pinned.header, sha);
      if (pinnedHash !== verifier.genesisHash) {
        lines.push(`block 0 hashes to ${verifier.genesisHash}, the pinned genesis to ${pinnedHash}`);
        return report;
      }
      lines.push(`block 0 (the pinned genesis): chain ${genesis.header.chain_id}, hash ${verifier.genesisHash}`);
    } else
      lines.push(`block 0 (genesis, taken as given): chain ${genesis.header.chain_id}, hash ${verifier.genesisHash}`);
    const last = rest.at(-1);
    for (const block of rest) {
      const verdict = verifier.add(block);
      // The last block's certificate in full, seal by seal (what a reader came to check).
      if (block === last && verdict.finality) report.finality = { ...verdict.finality, height: block.header.height };
      if (!verdict.ok) {
        lines.push(`block ${verdict.height}: ${verdict.reason}`);
        return report;
      }
    }
    const top = verifier.height;
    if (top > 0) {
      const f = report.finality;
      lines.push(
        `blocks 1–${top}: each linked to its parent, its body matching its header, final by a quorum of seals` +
          (f ? ` (block ${top}: ${f.validSeals} valid seals of ${f.validators} validators, quorum ${f.quorum})` : ''),
      );
    }
    if (proof) {
      const block = chain[proof.height];
      if (!block) {
        lines.push(`the proof's block ${proof.height} is not in the chain given (up to ${top})`);
        return report;
      }
      const hash = blockHash(block.header, sha);
      if (hash !== proof.block_hash) {
        lines.push(`block ${proof.height} hashes to ${hash}, the proof names ${proof.block_hash}`);
        return report;
      }
      if (!verifyProof({ ...proof, header: block.header, block_hash: hash, ...(sha ? { sha256: sha } : {}) })) {
        lines.push(`record ${proof.index} does not hash up to block ${proof.height}'s merkle_root through the proof`);
        return report;
      }
      lines.push(
        `record ${proof.index} of block ${proof.height}: ${proof.proof.length} proof step(s) up to merkle_root ${proof.merkle_root}`,
      );
    }
    report.ok = true;
    return report;
  }

  const p = proof as NonNullable<typeof proof>;
  const header = p.header as ({ merkle_root: string } & Record<string, unknown>) | undefined;
  const ok = verifyProof({
    record: p.record,
    proof: p.proof,
    merkle_root: p.merkle_root,
    ...(header !== undefined ? { header, block_hash: p.block_hash } : {}),
    ...(sha ? { sha256: sha } : {}),
  });
  if (!ok) {
    lines.push(
      `record ${p.index} of block ${p.height} does not hash up to merkle_root ${p.merkle_root}` +
        (header !== undefined ? ' (or the header does not match it)' : ''),
    );
    return report;
  }
  lines.push(
    `record ${p.index} of block ${p.height}: ${p.proof.length} proof step(s) up to merkle_root ${p.merkle_root}`,
  );
  if (header !== undefined) lines.push(`the header holds that merkle_root and hashes to block_hash ${p.block_hash}`);
  report.ok = true;
  return report;
}
