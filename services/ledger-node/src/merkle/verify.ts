/**
 * Offline Merkle proof verification (RFC 6962 §2.1). Browser-safe: no `node:` imports;
 * SHA-256 defaults to @noble/hashes and can be swapped for node:crypto on the server.
 */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { canonicalBytes } from '../canonical/canonical-json.ts';

/** One audit-path step: the sibling hash, and whether it sits to the right of the running hash. */
export interface ProofStep {
  sibling: string;
  right: boolean;
}

/** SHA-256 over the concatenation of parts. */
export type Sha256 = (...parts: Uint8Array[]) => Uint8Array;

/** Which list of the block a leaf comes from: records first, then validator changes. */
export type LeafKind = 'record' | 'validator_change';

export const nobleSha256Concat: Sha256 = (...parts) => {
  if (parts.length === 1) return nobleSha256(parts[0] as Uint8Array);
  let size = 0;
  for (const p of parts) size += p.length;
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return nobleSha256(all);
};

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** The leaf data of a record or validator change: canonical JSON of `{kind, value}` (the kind tag). */
export function leafData(kind: LeafKind, value: unknown): Uint8Array {
  return canonicalBytes({ kind, value });
}

/** RFC 6962 leaf hash: SHA-256(0x00 ‖ data). */
export function leafHash(data: Uint8Array, sha256: Sha256 = nobleSha256Concat): Uint8Array {
  return sha256(LEAF_PREFIX, data);
}

/** RFC 6962 interior node hash: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array, sha256: Sha256 = nobleSha256Concat): Uint8Array {
  return sha256(NODE_PREFIX, left, right);
}

const HASH_HEX = /^[0-9a-f]{64}$/;

function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87; // '0'-'9', 'a'-'f' (input already checked by HASH_HEX)
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++)
    out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** The root implied by a leaf hash and its audit path, or null when the path is malformed. */
export function rootFromPath(leaf: Uint8Array, proof: readonly ProofStep[], sha256: Sha256 = nobleSha256Concat) {
  let acc = leaf;
  for (const step of proof) {
    if (typeof step !== 'object' || step === null) return null;
    if (typeof step.sibling !== 'string' || !HASH_HEX.test(step.sibling) || typeof step.right !== 'boolean') {
      return null;
    }
    const sibling = hexToBytes(step.sibling);
    acc = step.right ? nodeHash(acc, sibling, sha256) : nodeHash(sibling, acc, sha256);
  }
  return bytesToHex(acc);
}

export interface VerifyProofInput {
  /** The record (or validator change, with `kind: 'validator_change'`) exactly as served by GET /proof. */
  record: unknown;
  proof: readonly ProofStep[];
  merkle_root: string;
  kind?: LeafKind;
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
    const sha = input.sha256 ?? nobleSha256Concat;
    const leaf = leafHash(leafData(input.kind ?? 'record', input.record), sha);
    const root = rootFromPath(leaf, input.proof, sha);
    if (root === null || root !== input.merkle_root.toLowerCase()) return false;
    if (input.header !== undefined) {
      if (input.header.merkle_root !== root) return false;
      if (input.block_hash !== undefined && bytesToHex(sha(canonicalBytes(input.header))) !== input.block_hash) {
        return false;
      }
    }
    return true;
  } catch {
    return false;
  }
}
