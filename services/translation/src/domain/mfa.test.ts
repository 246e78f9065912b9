import { generate, verify } from 'otplib';
import { describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret } from '../infra/secrets.ts';

// RFC 6238 Appendix B: the seeds are the ASCII strings below (20, 32 and 64 bytes), 8 digits, T0 = 0, X = 30.
const SEEDS = {
  sha1: '12345678901234567890',
  sha256: '12345678901234567890123456789012',
  sha512: '1234567890123456789012345678901234567890123456789012345678901234',
} as const;
const VECTORS: [number, Record<keyof typeof SEEDS, string>][] = [
  [59, { sha1: '94287082', sha256: '46119246', sha512: '90693936' }],
  [1111111109, { sha1: '07081804', sha256: '68084774', sha512: '25091201' }],
  [1111111111, { sha1: '14050471', sha256: '67062674', sha512: '99943326' }],
  [1234567890, { sha1: '89005924', sha256: '91819424', sha512: '93441116' }],
  [2000000000, { sha1: '69279037', sha256: '90698825', sha512: '38618901' }],
  [20000000000, { sha1: '65353130', sha256: '77737706', sha512: '47863826' }],
];

describe('TOTP (otplib) against the RFC 6238 Appendix B vectors', () => {
  for (const [time, expected] of VECTORS) {
    for (const algorithm of ['sha1', 'sha256', 'sha512'] as const) {
      it(`T=${time} ${algorithm} → ${expected[algorithm]}`, async () => {
        const secret = new TextEncoder().encode(SEEDS[algorithm]);
        const options = { secret, algorithm, digits: 8 as const, period: 30, epoch: time };
        expect(await generate(options)).toBe(expected[algorithm]);
        const result = await verify({ ...options, token: expected[algorithm] });
        expect(result.valid).toBe(true);
      });
    }
  }

  it('refuses a code of a step at or before the last accepted one (replay), accepts a later one', async () => {
    const secret = new TextEncoder().encode(SEEDS.sha1);
    const at = { secret, digits: 8 as const, epoch: 1111111111 };
    const code = await generate(at);
    const first = await verify({ ...at, token: code });
    expect(first.valid).toBe(true);
    const step = 'timeStep' in first ? first.timeStep : -1;
    expect(step).toBe(Math.floor(1111111111 / 30));
    expect((await verify({ ...at, token: code, afterTimeStep: step })).valid).toBe(false);
    const later = { ...at, epoch: 1111111111 + 30 };
    expect((await verify({ ...later, token: await generate(later), afterTimeStep: step })).valid).toBe(true);
  });
});

describe('secrets at rest', () => {
  it('round-trips, differs on every encryption, and refuses another key or an altered text', () => {
    const a = encryptSecret('JBSWY3DPEHPK3PXPJBSWY3DP', 'key material one, long enough....', 'mfa-secret/v1');
    const b = encryptSecret('JBSWY3DPEHPK3PXPJBSWY3DP', 'key material one, long enough....', 'mfa-secret/v1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('JBSWY3DP');
    expect(decryptSecret(a, 'key material one, long enough....', 'mfa-secret/v1')).toBe('JBSWY3DPEHPK3PXPJBSWY3DP');
    expect(() => decryptSecret(a, 'key material two, long enough....', 'mfa-secret/v1')).toThrow();
    const altered = `${a.slice(0, -2)}${a.at(-2) === 'A' ? 'B' : 'A'}${a.at(-1)}`;
    expect(() => decryptSecret(altered, 'key material one, long enough....', 'mfa-secret/v1')).toThrow();
  });
});
