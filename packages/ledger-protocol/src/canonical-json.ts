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
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonical JSON: ${value} is not allowed`);
      return JSON.stringify(value);
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i];
          if (item === undefined) throw new TypeError('canonical JSON: undefined in an array');
          out += i === 0 ? canonicalize(item) : `,${canonicalize(item)}`;
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        throw new TypeError('canonical JSON: only plain objects and arrays are allowed');
      }
      const record = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const key of Object.keys(record).sort()) {
        const item = record[key];
        if (item === undefined) continue;
        out += `${first ? '' : ','}${quoteKey(key)}:${canonicalize(item)}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      throw new TypeError(`canonical JSON: a ${typeof value} is not allowed`);
  }
}

// Keys repeat across records (id, entity, value…): quote each once.
const quotedKeys = new Map<string, string>();
function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < 4096 && key.length <= 64) quotedKeys.set(key, quoted);
  }
  return quoted;
}

const encoder = new TextEncoder();

/** UTF-8 bytes of the RFC 8785 canonical form: what is hashed and signed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalize(value));
}
