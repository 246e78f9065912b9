// The prefetching bridge reaches exactly the synchronous verifier's verdicts on the shared vectors (real and forged
// evidence), with WebCrypto answering, with nothing answering (every check falls back), and with an asynchronous
// primitive that lies: its answers are used, so a lying primitive is caught by the positive control below.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type Block, nobleVerify, verifyLightEvidence } from './index.ts';
import { judgeWithPrefetchedSignatures, webCryptoVerify } from './prefetched-signatures.ts';
import { VECTORS_FILE } from './vectors/generate.ts';

const vectors = JSON.parse(readFileSync(VECTORS_FILE, 'utf8')) as ReturnType<
  typeof import('./vectors/generate.ts').buildVectors
>;
const genesis = vectors.chain[0] as Block;

describe('judgeWithPrefetchedSignatures', () => {
  it.each(vectors.light.map((v) => [v.name, v] as const))(
    'the same verdict as the synchronous verifier: %s',
    async (_name, v) => {
      const direct = verifyLightEvidence(v.evidence, genesis, nobleVerify);
      let asked = 0;
      const counted = (p: string, m: Uint8Array, s: string) => {
        asked++;
        return webCryptoVerify(p, m, s);
      };
      const viaWebCrypto = await judgeWithPrefetchedSignatures(
        (verify) => verifyLightEvidence(v.evidence, genesis, verify),
        counted,
        () => {
          throw new Error('every signature the judgement needs was prefetched');
        },
      );
      expect(viaWebCrypto).toEqual(direct);
      expect(viaWebCrypto.ok).toBe(v.valid);
      if (direct.ok) expect(asked).toBeGreaterThan(0);
      const unavailable = await judgeWithPrefetchedSignatures(
        (verify) => verifyLightEvidence(v.evidence, genesis, verify),
        () => Promise.reject(new Error('no Ed25519 here')),
        nobleVerify,
      );
      expect(unavailable).toEqual(direct);
    },
  );

  it('uses the asynchronous answers: one that says yes to everything is believed (positive control)', async () => {
    // A valid record's evidence with one seal's signature changed: refused by the verifier, accepted when the
    // asynchronous primitive lies.
    const valid = vectors.light.find((v) => v.valid) as (typeof vectors.light)[0];
    const text = JSON.stringify(valid.evidence);
    const signature = /"([0-9a-f]{128})"/.exec(text)?.[1] as string;
    const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
    const forged = JSON.parse(text.replace(signature, flipped));
    expect(verifyLightEvidence(forged, genesis, nobleVerify).ok).toBe(false);
    const refused = await judgeWithPrefetchedSignatures(
      (verify) => verifyLightEvidence(forged, genesis, verify),
      webCryptoVerify,
      nobleVerify,
    );
    expect(refused.ok).toBe(false);
    const lied = await judgeWithPrefetchedSignatures(
      (verify) => verifyLightEvidence(forged, genesis, verify),
      async () => true,
      nobleVerify,
    );
    expect(lied.ok).toBe(true);
  });
});

describe('webCryptoVerify', () => {
  it('refuses malformed keys and signatures as the synchronous primitives do', async () => {
    const m = new Uint8Array([1, 2, 3]);
    expect(await webCryptoVerify('zz', m, 'a'.repeat(128))).toBe(false);
    expect(await webCryptoVerify('a'.repeat(64), m, 'b'.repeat(127))).toBe(false);
    expect(nobleVerify('zz', m, 'a'.repeat(128))).toBe(false);
  });
});
