import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal objects give equal text. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A short, stable hash of any JSON value (hex). */
export function hashOf(value: unknown, length = 16): string {
  return createHash('sha256').update(stableStringify(value)).digest('hex').slice(0, length);
}

/**
 * True when every field set in `desired` has the same value in `actual`. Fields the API server adds
 * (defaults, status, managedFields) are ignored; arrays must have the same length, element by element.
 *
 * @example isSubset({ spec: { replicas: 2 } }, { spec: { replicas: 2, paused: false } }) // true
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return false;
    return desired.every((item, i) => isSubset(item, actual[i]));
  }
  if (desired && typeof desired === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(desired as Record<string, unknown>).every(([k, v]) => isSubset(v, record[k]));
  }
  if (typeof desired === 'number' && typeof actual === 'string') return String(desired) === actual;
  return desired === actual;
}

/** The first path where `desired` and `actual` differ (for logs and events), or undefined. */
export function firstDifference(desired: unknown, actual: unknown, path = ''): string | undefined {
  if (isSubset(desired, actual)) return undefined;
  if (Array.isArray(desired) && Array.isArray(actual) && actual.length === desired.length) {
    for (let i = 0; i < desired.length; i++) {
      const d = firstDifference(desired[i], actual[i], `${path}[${i}]`);
      if (d) return d;
    }
  }
  if (desired && typeof desired === 'object' && !Array.isArray(desired) && actual && typeof actual === 'object') {
    for (const [k, v] of Object.entries(desired as Record<string, unknown>)) {
      const d = firstDifference(v, (actual as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return path || '.';
}
