import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign, verify } from 'node:crypto';
import { fromHex, toHex } from './hex.ts';

// DER prefixes that wrap a raw 32-byte Ed25519 key (RFC 8410): SubjectPublicKeyInfo and PKCS#8.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const KEY_HEX = /^[0-9a-f]{64}$/;
const SIG_HEX = /^[0-9a-f]{128}$/;

/** A validator key pair: 64-hex raw public key and 64-hex private seed (RFC 8032 secret key). */
export interface KeyPair {
  publicKey: string;
  privateKey: string;
}

/** Signs bytes with one private key; the KeyObject is built once. */
export interface Signer {
  readonly publicKey: string;
  sign(message: Uint8Array): string;
}

const MAX_CACHED_KEYS = 4096;
const publicKeyCache = new Map<string, KeyObject>();

/** True when `hex` is a well-formed raw Ed25519 public key (64 lower-case hex characters). */
export function isPublicKeyHex(hex: string): boolean {
  return KEY_HEX.test(hex);
}

function publicKeyObject(publicKeyHex: string): KeyObject {
  let key = publicKeyCache.get(publicKeyHex);
  if (key === undefined) {
    if (!KEY_HEX.test(publicKeyHex)) throw new TypeError('invalid Ed25519 public key (want 64 hex chars)');
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

function privateKeyObject(privateKeyHex: string): KeyObject {
  if (!KEY_HEX.test(privateKeyHex)) throw new TypeError('invalid Ed25519 private key (want 64 hex chars)');
  return createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(privateKeyHex, 'hex')]),
    format: 'der',
    type: 'pkcs8',
  });
}

/** Raw public key (hex) of a private seed (hex). */
export function publicKeyOf(privateKeyHex: string): string {
  const der = createPublicKey(privateKeyObject(privateKeyHex)).export({ format: 'der', type: 'spki' });
  return toHex(der.subarray(SPKI_PREFIX.length));
}

/** A fresh random key pair. Never log the private key. */
export function generateKeyPair(): KeyPair {
  const privateKey = randomBytes(32).toString('hex');
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/** The deterministic key pair of a 32-byte seed (tests and simulation). */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (seed.length !== 32) throw new TypeError('seed must be 32 bytes');
  const privateKey = toHex(seed);
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/**
 * A signer holding the private KeyObject.
 * @example const s = createSigner(priv); const sig = s.sign(bytes); verifySignature(s.publicKey, bytes, sig)
 */
export function createSigner(privateKeyHex: string): Signer {
  const key = privateKeyObject(privateKeyHex);
  const publicKey = publicKeyOf(privateKeyHex);
  return {
    publicKey,
    sign: (message) => sign(null, message, key).toString('hex'),
  };
}

/**
 * Ed25519 verification (RFC 8032, OpenSSL) with a cached public KeyObject per key.
 * Returns false (never throws) on a malformed key or signature.
 */
export function verifySignature(publicKeyHex: string, message: Uint8Array, signatureHex: string): boolean {
  if (!SIG_HEX.test(signatureHex) || !KEY_HEX.test(publicKeyHex)) return false;
  try {
    return verify(null, message, publicKeyObject(publicKeyHex), fromHex(signatureHex));
  } catch {
    return false;
  }
}
