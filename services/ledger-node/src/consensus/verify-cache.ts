/**
 * The node's one signature-verification cache: a memo of Ed25519 results in front of `verify`, shared by the
 * gate's door (`admit`), the engine (votes alone and inside certificates, seen several times a height) and the
 * chain state (a finalized block's seals, already checked as COMMITs). Bounded: at most `max` entries, the
 * oldest dropped first, each keyed by the key, the signature and the signed bytes (a few hundred bytes: the
 * signing bytes are a domain, height, round and hashes, never a block). Both results are remembered, so a
 * refused signature sent again costs a lookup.
 *
 * Memoizing a pure function keeps the engine deterministic.
 * @example const verify = cachedVerify(verifySignature); admit(body, chain, verify);
 */
import type { Verify } from '@scriptorium/ledger-protocol';

/** Entries kept by default: a few hundred heights of votes at 10 validators, about 10 MB. */
export const VERIFY_CACHE_MAX = 20_000;

export interface CachedVerify extends Verify {
  /** Entries held now. */
  readonly size: number;
}

export function cachedVerify(verify: Verify, max = VERIFY_CACHE_MAX): CachedVerify {
  if (!(max > 0)) throw new RangeError('max must be > 0');
  const results = new Map<string, boolean>();
  const cached = (pk: string, bytes: Uint8Array, sig: string): boolean => {
    const key = `${pk}${sig}${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')}`;
    let ok = results.get(key);
    if (ok === undefined) {
      ok = verify(pk, bytes, sig);
      if (results.size >= max) results.delete(results.keys().next().value as string);
      results.set(key, ok);
    }
    return ok;
  };
  return Object.defineProperty(cached, 'size', { get: () => results.size }) as CachedVerify;
}
