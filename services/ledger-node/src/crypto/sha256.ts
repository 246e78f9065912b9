import { hash } from 'node:crypto';
import { toHex } from './hex.ts';

/**
 * SHA-256 of the concatenation of the given byte arrays (node:crypto one-shot `hash`, the hot path).
 * The result is a Buffer (a Uint8Array), not copied.
 */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const data = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
  return hash('sha256', data, 'buffer');
}

/** SHA-256 as lower-case hex. */
export function sha256Hex(...parts: Uint8Array[]): string {
  return toHex(sha256(...parts));
}
