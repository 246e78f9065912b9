/**
 * Kubernetes resource quantities ("500m", "0.5", "1Gi", "1024Mi", "1e3") compared by value, exactly.
 *
 * The API server stores a quantity in canonical form ("0.5" comes back as "500m", "1024Mi" as "1Gi"), so a
 * desired object written differently must compare by value, not by text. The value follows the API server's
 * `resource.ParseQuantity`: exact decimal arithmetic (BigInt, no floats), a non-zero magnitude rounded up to
 * the next nano unit, capped at 2^63-1.
 *
 * Grammar (k8s.io/apimachinery/pkg/api/resource):
 *   quantity ::= [+-] number suffix
 *   number   ::= digits | digits "." digits | digits "." | "." digits
 *   suffix   ::= "" | n u m k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
 */

const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;
const EXPONENT = /^[eE]([+-]?[0-9]+)$/;
/** Longer text is refused (no BigInt work proportional to hostile input). */
const MAX_LENGTH = 100;
/** The API server's cap, 2^63-1, in nano units. */
const MAX_NANOS = ((1n << 63n) - 1n) * 1_000_000_000n;

/**
 * The value of a quantity in nano units (10^-9), as the API server stores it; undefined when the text is not
 * a quantity. Numbers (JSON integers in a spec) are read as their decimal text.
 *
 * @example parseQuantity('0.5') === parseQuantity('500m') // 500_000_000n
 */
export function parseQuantity(input: string | number): bigint | undefined {
  const text = typeof input === 'number' ? (Number.isFinite(input) ? String(input) : '') : input;
  if (text.length === 0 || text.length > MAX_LENGTH) return undefined;
  const shape = SHAPE.exec(text);
  if (!shape) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = shape;
  if (whole.length === 0 && fraction.length === 0) return undefined;
  let power10: number;
  let power2 = 0;
  const exponent = EXPONENT.exec(suffix);
  if (exponent) {
    // |exponent| beyond 400 changes nothing: the mantissa has at most 100 digits, so the value is over the
    // cap or under one nano (rounded up to 1n) either way.
    power10 = Math.max(-400, Math.min(400, Number(exponent[1])));
  } else if (Object.hasOwn(DECIMAL, suffix)) {
    power10 = DECIMAL[suffix] ?? 0;
  } else if (Object.hasOwn(BINARY, suffix)) {
    power10 = 0;
    power2 = BINARY[suffix] ?? 0;
  } else {
    return undefined;
  }
  // value = digits · 10^(power10 − |fraction|) · 2^power2; in nano units the power of ten grows by 9.
  const digits = BigInt(`${whole}${fraction}` || '0') << BigInt(power2);
  const shift = power10 - fraction.length + 9;
  let nanos: bigint;
  if (shift >= 0) {
    nanos = digits * 10n ** BigInt(shift);
  } else {
    const divisor = 10n ** BigInt(-shift);
    nanos = (digits + divisor - 1n) / divisor; // round the magnitude up, as the API server does
  }
  if (nanos > MAX_NANOS) nanos = MAX_NANOS;
  return sign === '-' ? -nanos : nanos;
}

/** True when both are quantities of the same value; when either is not a quantity, when the texts are equal. */
export function quantitiesEqual(a: string | number, b: string | number): boolean {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  if (x === undefined || y === undefined) return String(a) === String(b);
  return x === y;
}
