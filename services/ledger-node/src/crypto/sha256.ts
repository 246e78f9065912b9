import { createHash } from 'node:crypto';
import { toHex } from './hex.ts';

/** SHA-256 of the concatenation of the given byte arrays (node:crypto, the hot path). */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** SHA-256 as lower-case hex. */
export function sha256Hex(...parts: Uint8Array[]): string {
  return toHex(sha256(...parts));
}
