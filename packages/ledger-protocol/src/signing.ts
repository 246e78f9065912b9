import { canonicalBytes } from './canonical-json.ts';

export const PROTOCOL_DOMAIN = 'scriptorium-ledger/v1';

/**
 * The bytes a signature covers: a domain tag of message type and chain id, plus height and round,
 * then the canonical payload. Used for consensus messages and commit seals alike.
 */
export function signingBytes(type: string, chainId: string, height: number, round: number, payload: unknown) {
  return canonicalBytes({ domain: `${PROTOCOL_DOMAIN}/${type}/${chainId}`, height, round, payload });
}

/** What a commit seal signs: the block hash, bound to chain id, height and round. */
export function sealBytes(chainId: string, height: number, round: number, blockHashHex: string): Uint8Array {
  return signingBytes('COMMIT_SEAL', chainId, height, round, { block_hash: blockHashHex });
}
