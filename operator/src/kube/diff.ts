import { createHash } from 'node:crypto';
import { quantitiesEqual } from './quantity.ts';

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
 * Where a value sits, as far as quantities are concerned: a container's or claim's `resources`, its
 * `requests`/`limits` map, one quantity in that map (or an emptyDir `sizeLimit`), or anywhere else.
 */
type Place = 'other' | 'resources' | 'quantities' | 'quantity';

function placeOf(parent: Place, key: string): Place {
  if (parent === 'quantities' || key === 'sizeLimit') return 'quantity';
  if (parent === 'resources' && (key === 'requests' || key === 'limits')) return 'quantities';
  return key === 'resources' ? 'resources' : 'other';
}

function leafEqual(desired: unknown, actual: unknown, place: Place): boolean {
  if (
    place === 'quantity' &&
    (typeof desired === 'string' || typeof desired === 'number') &&
    (typeof actual === 'string' || typeof actual === 'number')
  ) {
    return quantitiesEqual(desired, actual);
  }
  if (typeof desired === 'number' && typeof actual === 'string') return String(desired) === actual;
  return desired === actual;
}

function subset(desired: unknown, actual: unknown, place: Place): boolean {
  if (desired === undefined) return true;
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return false;
    return desired.every((item, i) => subset(item, actual[i], 'other'));
  }
  if (desired && typeof desired === 'object') {
    if (!actual || typeof actual !== 'object' || Array.isArray(actual)) return false;
    const record = actual as Record<string, unknown>;
    return Object.entries(desired as Record<string, unknown>).every(([k, v]) =>
      subset(v, record[k], placeOf(place, k)),
    );
  }
  return leafEqual(desired, actual, place);
}

/**
 * True when every field set in `desired` has the same value in `actual`. Fields the API server adds
 * (defaults, status, managedFields) are ignored; arrays must have the same length, element by element.
 * Resource quantities (`resources.requests`/`limits` values, `sizeLimit`) compare by value: "0.5" equals the
 * API server's canonical "500m", "1024Mi" its "1Gi".
 *
 * @example isSubset({ spec: { replicas: 2 } }, { spec: { replicas: 2, paused: false } }) // true
 */
export function isSubset(desired: unknown, actual: unknown): boolean {
  return subset(desired, actual, 'other');
}

function difference(desired: unknown, actual: unknown, path: string, place: Place): string | undefined {
  if (subset(desired, actual, place)) return undefined;
  if (Array.isArray(desired) && Array.isArray(actual) && actual.length === desired.length) {
    for (let i = 0; i < desired.length; i++) {
      const d = difference(desired[i], actual[i], `${path}[${i}]`, 'other');
      if (d) return d;
    }
  }
  if (desired && typeof desired === 'object' && !Array.isArray(desired) && actual && typeof actual === 'object') {
    for (const [k, v] of Object.entries(desired as Record<string, unknown>)) {
      const d = difference(v, (actual as Record<string, unknown>)[k], `${path}.${k}`, placeOf(place, k));
      if (d) return d;
    }
  }
  return path || '.';
}

/** The first path where `desired` and `actual` differ (for logs and events), or undefined. */
export function firstDifference(desired: unknown, actual: unknown): string | undefined {
  return difference(desired, actual, '', 'other');
}
