import { describe, expect, it } from 'vitest';
import { base62, bearerToken, generateApiKey, looksLikeApiKey, secretsEqual, sha256 } from './secrets.ts';

describe('API keys', () => {
  it('are sk_live_ + 43 base62 characters (256 bits), with a short shown prefix and a SHA-256 hash', () => {
    const key = generateApiKey();
    expect(key.secret).toMatch(/^sk_live_[0-9A-Za-z]{43}$/);
    expect(looksLikeApiKey(key.secret)).toBe(true);
    expect(key.prefix).toBe(key.secret.slice(0, 12));
    expect(key.hash.equals(sha256(key.secret))).toBe(true);
    expect(generateApiKey().secret).not.toBe(key.secret);
  });

  it('base62 encodes the full range at a fixed width', () => {
    expect(base62(new Uint8Array(32), 43)).toBe('0'.repeat(43));
    expect(base62(new Uint8Array(32).fill(255), 43)).toHaveLength(43);
    expect(base62(Uint8Array.of(61), 2)).toBe('0z');
    expect(base62(Uint8Array.of(62), 2)).toBe('10');
  });

  it('rejects malformed keys before any lookup', () => {
    for (const bad of [
      '',
      'sk_live_',
      `sk_test_${'a'.repeat(43)}`,
      `sk_live_${'a'.repeat(42)}!`,
      `sk_live_${'a'.repeat(44)}`,
    ]) {
      expect(looksLikeApiKey(bad)).toBe(false);
    }
  });
});

describe('secrets', () => {
  it('compares in constant time whatever the lengths', () => {
    expect(secretsEqual('a'.repeat(40), 'a'.repeat(40))).toBe(true);
    expect(secretsEqual('a'.repeat(40), 'a'.repeat(39))).toBe(false);
    expect(secretsEqual('', 'x')).toBe(false);
  });

  it('reads bearer tokens', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('bearer   abc ')).toBe('abc');
    expect(bearerToken('Basic abc')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken(undefined)).toBeNull();
  });
});
