// The platform crypto in Node: node:crypto, the hot path of the ledger node (one-shot SHA-256, Ed25519
// verification with a cached public KeyObject per key). Same signatures as crypto-web.ts.
import { createPublicKey, hash, type KeyObject, verify } from 'node:crypto';

/** DER prefix that wraps a raw 32-byte Ed25519 public key as SubjectPublicKeyInfo (RFC 8410). */
export const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const KEY_HEX = /^[0-9a-f]{64}$/;
const SIG_HEX = /^[0-9a-f]{128}$/;
const MAX_CACHED_KEYS = 4096;
const publicKeyCache = new Map<string, KeyObject>();

/** SHA-256 of the concatenation of the parts. The result is a Buffer (a Uint8Array), not copied. */
export function sha256(...parts: Uint8Array[]): Uint8Array {
  const data = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
  return hash('sha256', data, 'buffer');
}

/** SHA-256 as lower-case hex. */
export function sha256Hex(...parts: Uint8Array[]): string {
  return hash('sha256', parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts), 'hex');
}

function publicKeyObject(publicKeyHex: string): KeyObject {
  let key = publicKeyCache.get(publicKeyHex);
  if (key === undefined) {
    key = createPublicKey({
      key: Buffer.concat([SPKI_PREFIX, Buffer.from(publicKeyHex, 'hex')]),
      format: 'der',
      type: 'spki',
    });
    if (publicKeyCache.size >= MAX_CACHED_KEYS) publicKeyCache.clear();
    publicKeyCache.set(publicKeyHex, key);
  }
  return key;
}

/**
 * Ed25519 verification (RFC 8032, OpenSSL) with a cached public KeyObject per key.
 * Returns false (never throws) on a malformed key or signature.
 */
export function verifySignature(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!SIG_HEX.test(signatureHex) || !KEY_HEX.test(publicKeyHex)) return false;
  try {
    return verify(null, message, publicKeyObject(publicKeyHex), Buffer.from(signatureHex, 'hex'));
  } catch {
    return false;
  }
}

export const platform: 'node' | 'web' = 'node';
