// The one signature cache: each (key, bytes, signature) checked once, refusals remembered too, the signed
// bytes part of the key, and at most `max` entries (the oldest go first).
import { verifySignature } from '@scriptorium/ledger-protocol';
import { createSigner, generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { describe, expect, it } from 'vitest';
import { cachedVerify, VERIFY_CACHE_MAX } from './verify-cache.ts';

const signer = createSigner(generateKeyPair().privateKey);
const bytes = (text: string) => new TextEncoder().encode(text);

function counting() {
  const calls: string[] = [];
  const verify = (pk: string, b: Uint8Array, sig: string) => {
    calls.push(new TextDecoder().decode(b));
    return verifySignature(pk, b, sig);
  };
  return { calls, verify };
}

describe('cachedVerify', () => {
  it('checks a signature once, and remembers a refusal as well', () => {
    const { calls, verify } = counting();
    const cached = cachedVerify(verify);
    const good = signer.sign(bytes('a'));
    expect(cached(signer.publicKey, bytes('a'), good)).toBe(true);
    expect(cached(signer.publicKey, bytes('a'), good)).toBe(true);
    expect(cached(signer.publicKey, bytes('b'), good)).toBe(false);
    expect(cached(signer.publicKey, bytes('b'), good)).toBe(false);
    expect(calls).toEqual(['a', 'b']);
  });

  it('keys by the bytes: a good signature does not vouch for other bytes, or for a subarray view', () => {
    const cached = cachedVerify(verifySignature);
    const good = signer.sign(bytes('abc'));
    expect(cached(signer.publicKey, bytes('abc'), good)).toBe(true);
    expect(cached(signer.publicKey, bytes('xabc').subarray(1), good)).toBe(true);
    expect(cached(signer.publicKey, bytes('abcd').subarray(0, 3), good)).toBe(true);
    expect(cached(signer.publicKey, bytes('abd'), good)).toBe(false);
  });

  it('holds at most `max` entries, dropping the oldest first', () => {
    const { calls, verify } = counting();
    const cached = cachedVerify(verify, 2);
    const sig = signer.sign(bytes('x'));
    for (const t of ['1', '2', '3']) cached(signer.publicKey, bytes(t), sig);
    expect(cached.size).toBe(2);
    cached(signer.publicKey, bytes('3'), sig); // kept
    cached(signer.publicKey, bytes('1'), sig); // dropped: checked again
    expect(calls).toEqual(['1', '2', '3', '1']);
    expect(cachedVerify(verifySignature).size).toBe(0);
    expect(VERIFY_CACHE_MAX).toBe(20_000);
  });
});
