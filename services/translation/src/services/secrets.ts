// Secret material: API keys and constant-time comparison.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
