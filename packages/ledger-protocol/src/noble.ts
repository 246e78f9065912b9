// SHA-256 and strict RFC 8032 Ed25519 verification from @noble: pure JavaScript, the same in every
// JavaScript runtime. Browsers use them as the platform crypto; Node tests use them to cross-check
// node:crypto.
import * as ed from '@noble/ed25519';
import { sha256 as nobleHash, sha512 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, toHex } from './hex.ts';

ed.hashes.sha512 ??= sha512;

/** SHA-256 of the concatenation of the parts (@noble/hashes). */
export function nobleSha256(...parts: Uint8Array[]): Uint8Array {
  return nobleHash(parts.length === 1 ? (parts[0] as Uint8Array) : concatBytes(...parts));
}

/** SHA-256 as lower-case hex (@noble/hashes). */
export function nobleSha256Hex(...parts: Uint8Array[]): string {
  return toHex(nobleSha256(...parts));
}

/**
 * Ed25519 verification with @noble/ed25519 in strict RFC 8032 mode (`zip215: false`: canonical S and
 * point encodings only, as OpenSSL). Returns false, never throws, on malformed input.
 */
export function nobleVerify(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!/^[0-9a-f]{128}$/.test(signatureHex) || !/^[0-9a-f]{64}$/.test(publicKeyHex)) return false;
  try {
    return ed.verify(fromHex(signatureHex), message, fromHex(publicKeyHex), { zip215: false });
  } catch {
    return false;
  }
}
