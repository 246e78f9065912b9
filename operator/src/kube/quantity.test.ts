import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuantity, quantitiesEqual } from './quantity.ts';

// What a user writes → what the API server stores and returns (resource.Quantity canonicalisation; cases from
// k8s.io/apimachinery/pkg/api/resource/quantity_test.go and `kubectl apply` of a Pod).
const CANONICAL: Array<[string, string]> = [
  ['0.5', '500m'],
  ['.5', '500m'],
  ['1000m', '1'],
  ['1024Mi', '1Gi'],
  ['1.5Gi', '1536Mi'],
  ['0.5Gi', '512Mi'],
  ['1000k', '1M'],
  ['1000000', '1M'],
  ['1e3', '1k'],
  ['1E3', '1k'],
  ['1e+3', '1k'],
  ['1.5e3', '1500'],
  ['1e-3', '1m'],
  ['2E-1', '200m'],
  ['0.001', '1m'],
  ['0.0001', '100u'],
  ['1000u', '1m'],
  ['1000n', '1u'],
  ['0.000000001', '1n'],
  ['+1', '1'],
  ['1.', '1'],
  ['1.0', '1'],
  ['0Ki', '0'],
  ['0M', '0'],
  ['0e10', '0'],
  ['-0.5', '-500m'],
  ['1Ki', '1024'],
  ['1Mi', '1048576'],
  ['1Ti', '1024Gi'],
  ['1Pi', '1024Ti'],
  ['1Ei', '1024Pi'],
  ['1G', '1000M'],
  ['1T', '1000G'],
  ['1P', '1000T'],
  ['1E', '1000P'],
  // Below one nano, rounded up (away from zero), as the API server does.
  ['0.1n', '1n'],
  ['0.0000000001', '1n'],
  ['1.0001n', '2n'],
  ['1e-12', '1n'],
  ['-0.1n', '-1n'],
  // Capped at 2^63-1.
  ['12E', '9223372036854775807'],
  ['8Ei', '9223372036854775807'],
  ['1e400', '9223372036854775807'],
  ['1e99999', '9223372036854775807'],
  ['1e-99999', '1n'],
];

const DIFFERENT: Array<[string, string]> = [
  ['1Gi', '1G'],
  ['1Ki', '1k'],
  ['500m', '5'],
  ['1n', '2n'],
  ['1', '-1'],
  ['1M', '1Mi'],
];

const INVALID = [
  '',
  '.',
  '+',
  'e3',
  '1e',
  '1 Gi',
  '1GB',
  '1Kb',
  'Mi',
  '1.2.3',
  '0x10',
  '1e3.5',
  '1mi',
  'toString',
  '1constructor',
];

describe('parseQuantity', () => {
  it.each(CANONICAL)('%s has the value of its canonical form %s', (written, canonical) => {
    expect(parseQuantity(written)).toBeDefined();
    expect(parseQuantity(written)).toBe(parseQuantity(canonical));
    expect(quantitiesEqual(written, canonical)).toBe(true);
  });

  it.each(DIFFERENT)('%s and %s differ', (a, b) => {
    expect(quantitiesEqual(a, b)).toBe(false);
  });

  it('gives values in nano units', () => {
    expect(parseQuantity('500m')).toBe(500_000_000n);
    expect(parseQuantity('1Gi')).toBe(1_073_741_824_000_000_000n);
    expect(parseQuantity('1n')).toBe(1n);
    expect(parseQuantity(2)).toBe(2_000_000_000n);
    expect(parseQuantity('9223372036854775807')).toBe(9_223_372_036_854_775_807_000_000_000n);
  });

  it.each(INVALID)('refuses %j', (text) => {
    expect(parseQuantity(text)).toBeUndefined();
  });

  it('refuses text over 100 characters and numbers that are not finite', () => {
    expect(parseQuantity('1'.repeat(101))).toBeUndefined();
    expect(parseQuantity(Number.NaN)).toBeUndefined();
    expect(parseQuantity(Number.POSITIVE_INFINITY)).toBeUndefined();
  });

  it('compares text that is not a quantity as text', () => {
    expect(quantitiesEqual('abc', 'abc')).toBe(true);
    expect(quantitiesEqual('abc', '1')).toBe(false);
  });

  it('reads JSON numbers like their text', () => {
    expect(quantitiesEqual(2, '2')).toBe(true);
    expect(quantitiesEqual(2, '2000m')).toBe(true);
    expect(quantitiesEqual(1e21, '1Z')).toBe(false);
    expect(quantitiesEqual(1e21, '1000E')).toBe(true);
  });

  it('gives every spelling of one millicore count the same value (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (millis) => {
        const whole = millis / 1000n;
        const frac = (millis % 1000n).toString().padStart(3, '0');
        const decimal = `${whole}.${frac}`;
        const value = parseQuantity(`${millis}m`);
        expect(parseQuantity(decimal)).toBe(value);
        expect(parseQuantity(`${millis}e-3`)).toBe(value);
        expect(parseQuantity(`${millis * 1000n}u`)).toBe(value);
        expect(value).toBe(millis * 1_000_000n);
      }),
      { numRuns: 300 },
    );
  });

  it('gives every binary spelling of one byte count the same value (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 20 }), fc.constantFrom('Ki', 'Mi', 'Gi'), (n, unit) => {
        const step = { Ki: 1024n, Mi: 1024n ** 2n, Gi: 1024n ** 3n }[unit];
        expect(parseQuantity(`${n}${unit}`)).toBe(BigInt(n) * step * 1_000_000_000n);
        expect(quantitiesEqual(`${n}${unit}`, String(BigInt(n) * step))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), (text) => {
        const value = parseQuantity(text);
        expect(value === undefined || typeof value === 'bigint').toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
