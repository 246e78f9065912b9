import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './hex.ts';
import { nobleVerify, sha256Hex } from './index.ts';
import { createSigner, keyFileContent, keyPairFromSeed, parseKeyFile, publicKeyOf, verifySignature } from './keys.ts';

ed.hashes.sha512 = sha512;

// RFC 8032 §7.1 test vectors (TEST 1, 2, 3, 1024 and SHA(abc)).
const VECTORS = [
  {
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature:
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature:
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    public: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature:
      '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
  {
    secret: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    public: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message:
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    signature:
      'dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704',
  },
];

const STRICT = { zip215: false } as const;

describe('Ed25519 on node:crypto, cross-checked with @noble/ed25519 (strict RFC 8032)', () => {
  it.each(VECTORS.map((v, i) => [i, v] as const))('RFC 8032 vector %i: both agree', (_i, v) => {
    const msg = fromHex(v.message);
    expect(publicKeyOf(v.secret)).toBe(v.public);
    expect(toHex(ed.getPublicKey(fromHex(v.secret)))).toBe(v.public);
    const signer = createSigner(v.secret);
    expect(signer.sign(msg)).toBe(v.signature);
    expect(toHex(ed.sign(msg, fromHex(v.secret)))).toBe(v.signature);
    expect(verifySignature(v.public, msg, v.signature)).toBe(true);
    expect(ed.verify(fromHex(v.signature), msg, fromHex(v.public), STRICT)).toBe(true);
    expect(nobleVerify(v.public, msg, v.signature)).toBe(true);
  });

  it('agree on signatures the nodes produce, and on their rejection when tampered', () => {
    for (let i = 0; i < 20; i++) {
      const seed = new Uint8Array(32).fill(i + 1);
      const pair = keyPairFromSeed(seed);
      const signer = createSigner(pair.privateKey);
      const msg = new TextEncoder().encode(`{"domain":"scriptorium-ledger/v1/PREPARE/test","height":${i}}`);
      const sig = signer.sign(msg);
      expect(verifySignature(pair.publicKey, msg, sig)).toBe(true);
      expect(ed.verify(fromHex(sig), msg, fromHex(pair.publicKey), STRICT)).toBe(true);
      const bad = fromHex(sig);
      bad[i % 64] = (bad[i % 64] as number) ^ 1;
      expect(verifySignature(pair.publicKey, msg, toHex(bad))).toBe(false);
      expect(ed.verify(bad, msg, fromHex(pair.publicKey), STRICT)).toBe(false);
      expect(nobleVerify(pair.publicKey, msg, toHex(bad))).toBe(false);
    }
  });

  it('both reject a non-canonical S (S + L)', () => {
    const v = VECTORS[0] as (typeof VECTORS)[0];
    const sig = fromHex(v.signature);
    // S is little-endian in bytes 32..63; add the group order L.
    const L = 2n ** 252n + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i] as number);
    s += L;
    for (let i = 32; i < 64; i++) {
      sig[i] = Number(s & 0xffn);
      s >>= 8n;
    }
    expect(verifySignature(v.public, new Uint8Array(0), toHex(sig))).toBe(false);
    expect(ed.verify(sig, new Uint8Array(0), fromHex(v.public), STRICT)).toBe(false);
    expect(nobleVerify(v.public, new Uint8Array(0), toHex(sig))).toBe(false);
  });

  it('returns false, never throws, on malformed keys and signatures', () => {
    expect(verifySignature('zz', new Uint8Array(0), 'a'.repeat(128))).toBe(false);
    expect(verifySignature('a'.repeat(64), new Uint8Array(0), 'short')).toBe(false);
    expect(() => createSigner('nothex')).toThrow(TypeError);
    expect(nobleVerify('zz', new Uint8Array(0), 'a'.repeat(128))).toBe(false);
    expect(nobleVerify('a'.repeat(64), new Uint8Array(0), 'b'.repeat(128))).toBe(false);
  });

  it('key files: the content keygen writes parses back; a mismatched or malformed file is refused', () => {
    const pair = keyPairFromSeed(new Uint8Array(32).fill(9));
    const text = keyFileContent(pair);
    expect(text).toBe(`{"public_key":"${pair.publicKey}","private_key":"${pair.privateKey}"}\n`);
    expect(parseKeyFile(text)).toEqual(pair);
    const other = keyPairFromSeed(new Uint8Array(32).fill(10));
    expect(() => parseKeyFile(keyFileContent({ ...pair, publicKey: other.publicKey }))).toThrow(/does not match/);
    expect(() => parseKeyFile('{"public_key":1}')).toThrow(/not \{public_key, private_key\}/);
    expect(() => parseKeyFile('nope')).toThrow(/not JSON/);
    try {
      parseKeyFile(keyFileContent({ ...pair, publicKey: other.publicKey }));
    } catch (err) {
      expect((err as Error).message).not.toContain(pair.privateKey);
    }
  });

  it('sha256', () => {
    expect(sha256Hex(new TextEncoder().encode('abc'))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
