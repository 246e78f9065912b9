import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { verifyStripeSignature } from './billing.ts';

const secret = 'whsec_unit';
const body = Buffer.from('{"id":"evt_1","type":"invoice.paid","data":{"object":{"customer":"cus_1"}}}');
const now = 1_800_000_000_000;
const sig = (t: number, key = secret, payload = body) =>
  createHmac('sha256', key).update(`${t}.`).update(payload).digest('hex');

describe('verifyStripeSignature', () => {
  it('accepts a valid v1 among others, refuses expiry beyond 300 s either way, other keys and other bodies', () => {
    const t = now / 1000;
    expect(verifyStripeSignature(body, `t=${t},v1=${sig(t)}`, secret, now)).toBe(true);
    expect(verifyStripeSignature(body, `t=${t},v1=${sig(t, 'old')},v1=${sig(t)},v0=abc`, secret, now)).toBe(true);
    expect(verifyStripeSignature(body, `t=${t - 300},v1=${sig(t - 300)}`, secret, now)).toBe(true);
    expect(verifyStripeSignature(body, `t=${t - 301},v1=${sig(t - 301)}`, secret, now)).toBe(false);
    expect(verifyStripeSignature(body, `t=${t + 301},v1=${sig(t + 301)}`, secret, now)).toBe(false);
    expect(verifyStripeSignature(body, `t=${t},v1=${sig(t, 'other')}`, secret, now)).toBe(false);
    expect(verifyStripeSignature(Buffer.from(`${body} `), `t=${t},v1=${sig(t)}`, secret, now)).toBe(false);
    expect(verifyStripeSignature(body, `v1=${sig(t)}`, secret, now)).toBe(false);
    expect(verifyStripeSignature(body, undefined, secret, now)).toBe(false);
  });

  it('never throws and never accepts an arbitrary header (fuzzed)', () => {
    const t = now / 1000;
    const part = fc.oneof(
      fc.constantFrom(`t=${t}`, 't=', 'v1=', 'v1=zz', `v1=${sig(t, 'x')}`, '=', ',', 't=1e9', 't=-1'),
      fc.string({ maxLength: 80 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 8 }), fc.uint8Array({ maxLength: 64 }), (parts, raw) => {
        expect(verifyStripeSignature(Buffer.from(raw), parts.join(','), secret, now)).toBe(false);
      }),
      { numRuns: 500, seed: 13 },
    );
  });
});
