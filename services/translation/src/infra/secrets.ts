// Secret material: API keys and constant-time comparison.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'sk_live_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 32 random bytes (256 bits) in base62 are at most 43 characters; keys are padded to exactly that. */
const BODY_LENGTH = 43;
const API_KEY_PATTERN = /^sk_live_[0-9A-Za-z]{43}$/;
/** Characters of the key shown back as its prefix (not secret: 4 of the random characters). */
const SHOWN_PREFIX_LENGTH = API_KEY_PREFIX.length + 4;

export function base62(bytes: Uint8Array, length: number): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(length, '0');
}

export interface NewApiKey {
  /** The full secret: shown once, never stored. */
  secret: string;
  /** The non-secret start of the key, stored and shown in listings. */
  prefix: string;
  /** SHA-256 of the secret: the only thing stored. */
  hash: Buffer;
}

/**
 * A new API key: `sk_live_` + 256 random bits in base62.
 * @example const { secret, prefix, hash } = generateApiKey();
 */
export function generateApiKey(): NewApiKey {
  const secret = API_KEY_PREFIX + base62(randomBytes(32), BODY_LENGTH);
  return { secret, prefix: secret.slice(0, SHOWN_PREFIX_LENGTH), hash: sha256(secret) };
}

/** True when `value` has the shape of an API key (checked before any lookup). */
export const looksLikeApiKey = (value: string): boolean => API_KEY_PATTERN.test(value);

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Constant-time equality of two secrets of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** Constant-time equality of two digests. */
export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The 256-bit AES key derived from the configured key material (HKDF-SHA256, one purpose per `info`). */
function aesKey(keyMaterial: string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', keyMaterial, 'scriptorium-translation', info, 32));
}

/**
 * Encrypts `plain` for storage: AES-256-GCM under a key derived from `keyMaterial`; base64url of iv ‖ tag ‖ ciphertext.
 * @example const stored = encryptSecret(totpSecret, config.mfaEncryptionKey, 'mfa-secret/v1');
 */
export function encryptSecret(plain: string, keyMaterial: string, info: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', aesKey(keyMaterial, info), iv);
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** Decrypts what `encryptSecret` stored; throws when it was altered or the key differs. */
export function decryptSecret(stored: string, keyMaterial: string, info: string): string {
  const raw = Buffer.from(stored, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', aesKey(keyMaterial, info), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
