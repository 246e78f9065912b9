/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * ECMAScript's own `JSON.stringify` already serializes numbers and strings exactly as RFC 8785
 * requires (§3.2.2.2, §3.2.2.3); JCS adds key ordering by UTF-16 code units and no whitespace.
 * Pure and dependency-free, so the browser console can use it too.
 *
 * Object properties whose value is `undefined` are left out (as JSON.stringify does, so optional
 * fields behave); anything else that JSON cannot represent throws.
 *
 * @example canonicalize({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalize(value: unknown): string {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON: ${value} is not allowed`);
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        return `[${value.map((item) => {
          if (item === undefined) throw new TypeError('canonical JSON: undefined in an array');
          return canonicalize(item);
        })}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError('canonical JSON: only plain objects and arrays are allowed');
      }
      const record = value as Record<string, unknown>;
      const parts: string[] = [];
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined) continue;
        parts.push(`${JSON.stringify(key)}:${canonicalize(item)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw new TypeError(`canonical JSON: a ${typeof value} is not allowed`);
  }
}

const encoder = new TextEncoder();

/** UTF-8 bytes of the RFC 8785 canonical form: what is hashed and signed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalize(value));
}
