/**
 * Browser-safe verification of a block's finality certificate (no node: imports): @noble/ed25519 in
 * strict RFC 8032 mode (`zip215: false`) and @noble/hashes. Same rules as `verifyFinality`; slower,
 * meant for the web console and offline tools.
 */
import * as ed from '@noble/ed25519';
import { sha256 as nobleSha256, sha512 } from '@noble/hashes/sha2.js';
import { canonicalBytes } from '../canonical/canonical-json.ts';
import type { Block, BlockHeader } from './schemas.ts';
import { sealBytes } from './seal.ts';
import { quorumSize } from './validators.ts';

ed.hashes.sha512 ??= sha512;

const HEX = /^[0-9a-f]*$/;

function hexToBytes(hex: string): Uint8Array {
  if (hex.length % 2 !== 0 || !HEX.test(hex)) throw new TypeError('invalid hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function bytesToHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

/** The block hash, computed with @noble/hashes (equals `blockHash`). */
export function blockHashOffline(header: BlockHeader): string {
  return bytesToHex(nobleSha256(canonicalBytes(header)));
}

/**
 * Verifies a finality certificate offline against the set active at the block's height.
 * @example verifyFinalityOffline(block, validatorsAtHeight).ok
 */
export function verifyFinalityOffline(
  block: Block,
  activeSet: readonly string[],
): { ok: true; round: number } | { ok: false; reason: string } {
  const seals = block.commit_signatures;
  if (seals.length === 0) return { ok: false, reason: 'no commit seals' };
  const members = new Set(activeSet);
  const round = (seals[0] as (typeof seals)[0]).round;
  const bytes = sealBytes(block.header.chain_id, block.header.height, round, blockHashOffline(block.header));
  const seen = new Set<string>();
  for (const seal of seals) {
    if (seal.round !== round) return { ok: false, reason: 'seals of different rounds' };
    if (!members.has(seal.validator)) return { ok: false, reason: 'seal from a non-validator' };
    if (seen.has(seal.validator)) return { ok: false, reason: 'duplicate seal' };
    seen.add(seal.validator);
    let valid = false;
    try {
      valid = ed.verify(hexToBytes(seal.signature), bytes, hexToBytes(seal.validator), { zip215: false });
    } catch {
      valid = false;
    }
    if (!valid) return { ok: false, reason: 'invalid seal signature' };
  }
  const need = quorumSize(members.size);
  if (seen.size < need) return { ok: false, reason: `${seen.size} seals, quorum is ${need}` };
  return { ok: true, round };
}
