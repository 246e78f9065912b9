// Validator keys on node:crypto (Node only; the browser console never holds a private key): key pairs,
// a signer, and the key file `{public_key, private_key}` that the node's `keygen` writes and the
// operator's key Secrets hold.
import { createPrivateKey, createPublicKey, type KeyObject, randomBytes, sign } from 'node:crypto';
import * as z from 'zod';
import { SPKI_PREFIX, verifySignature } from './crypto-node.ts';
import { PublicKeyHex } from './schemas.ts';

export { verifySignature };

/** DER prefix that wraps a raw 32-byte Ed25519 private seed as PKCS#8 (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const KEY_HEX = /^[0-9a-f]{64}$/;

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

function privateKeyObject(privateKeyHex: string) {
  if (!KEY_HEX.test(privateKeyHex)) throw new TypeError('invalid Ed25519 private key (want 64 hex chars)');
  return createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(privateKeyHex, 'hex')]),
    format: 'der',
    type: 'pkcs8',
  });
}

/** Raw public key (hex) of a private KeyObject. */
function rawPublicKey(key: KeyObject): string {
  const der = createPublicKey(key).export({ format: 'der', type: 'spki' });
  return der.subarray(SPKI_PREFIX.length).toString('hex');
}

/** Raw public key (hex) of a private seed (hex). */
export function publicKeyOf(privateKeyHex: string): string {
  return rawPublicKey(privateKeyObject(privateKeyHex));
}

/** A fresh random key pair. Never log the private key. */
export function generateKeyPair(): KeyPair {
  const privateKey = randomBytes(32).toString('hex');
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/** The deterministic key pair of a 32-byte seed (tests and simulation). */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (seed.length !== 32) throw new TypeError('seed must be 32 bytes');
  const privateKey = Buffer.from(seed).toString('hex');
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/**
 * A signer holding the private KeyObject.
 * @example const s = createSigner(priv); const sig = s.sign(bytes); verifySignature(s.publicKey, bytes, sig)
 */
export function createSigner(privateKeyHex: string): Signer {
  const key = privateKeyObject(privateKeyHex);
  const publicKey = rawPublicKey(key);
  return {
    publicKey,
    sign: (message) => sign(null, message, key).toString('hex'),
  };
}

/** The key file's shape: `{public_key, private_key}`, both 64 hex characters. */
export const KeyFile = z.object({
  public_key: PublicKeyHex,
  private_key: z.string().regex(KEY_HEX, 'want a 64-hex Ed25519 private seed'),
});

/**
 * The key file's content, exactly as `ledger-node keygen` writes it (one JSON line and a newline).
 * @example writeFileSync(path, keyFileContent(generateKeyPair()), { mode: 0o600 })
 */
export function keyFileContent(pair: KeyPair): string {
  return `${JSON.stringify({ public_key: pair.publicKey, private_key: pair.privateKey })}\n`;
}

/**
 * Parses a key file's text; throws an Error naming what is wrong (not JSON, wrong shape, or a public key
 * that does not belong to the private key). The message never contains the private key.
 */
export function parseKeyFile(text: string): KeyPair {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('not JSON');
  }
  const parsed = KeyFile.safeParse(data);
  if (!parsed.success) throw new Error('not {public_key, private_key} in hex');
  if (publicKeyOf(parsed.data.private_key) !== parsed.data.public_key)
    throw new Error('public key does not match the private key');
  return { publicKey: parsed.data.public_key, privateKey: parsed.data.private_key };
}
