/**
 * Offline Merkle proof verification of a GET /proof/{height}/{index} body: `ledger-node verify-proof` and
 * the browser console run this same code. Browser-safe; the hash defaults to the platform's SHA-256.
 */
import { sha256 as platformSha256 } from '#platform-crypto';
import { canonicalBytes } from './canonical-json.ts';
import { toHex } from './hex.ts';
import { leafHash, type ProofStep, rootFromPath, type Sha256 } from './merkle.ts';

/**
 * The leaf data of a record or a validator change: its own RFC 8785 canonical form, nothing around it (spec:
 * "its canonical byte form is the Merkle leaf"), so a verifier written from the spec alone gets the same root.
 * A record and a change can never share a leaf: they have disjoint required fields (`id`; `action` and
 * `validator`, and nothing else), which the block schema enforces.
 * @example leafHash(leafData(record)) // SHA-256(0x00 ‖ JCS(record))
 */
export function leafData(item: unknown): Uint8Array {
  return canonicalBytes(item);
}

export interface VerifyProofInput {
  /** The record (or validator change) exactly as served by GET /proof. */
  record: unknown;
  proof: readonly ProofStep[];
  merkle_root: string;
  sha256?: Sha256;
  /**
   * Optional: the block header. When given, its merkle_root must equal merkle_root and, when block_hash
   * is given too, SHA-256 of its canonical form must equal block_hash (binding the record to a block).
   */
  header?: { merkle_root: string } & Record<string, unknown>;
  block_hash?: string;
}

/**
 * True when the record hashes, through the proof steps, to merkle_root. Never throws on bad input.
 * @example verifyProof({ record: res.record, proof: res.proof, merkle_root: res.merkle_root })
 */
export function verifyProof(input: VerifyProofInput): boolean {
  try {
    if (!Array.isArray(input.proof) || typeof input.merkle_root !== 'string') return false;
    const sha = input.sha256 ?? platformSha256;
    const leaf = leafHash(leafData(input.record), sha);
    const root = rootFromPath(leaf, input.proof, sha);
    if (root === null || root !== input.merkle_root.toLowerCase()) return false;
    if (input.header !== undefined) {
      if (input.header.merkle_root !== root) return false;
      if (input.block_hash !== undefined && toHex(sha(canonicalBytes(input.header))) !== input.block_hash) {
        return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}
