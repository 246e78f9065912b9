// Where each entity of a listing page lies in its bytes, without parsing it. A page that changed since the last
// pass usually changed in a few entities only (a tamper, an update); the watcher digests each entity's bytes and
// parses only those whose bytes it has not seen at that place before, instead of the whole page.
//
// The scan follows JSON's structure at the top level only: `[`, objects separated by commas, `]`, whitespace
// between. Inside an object it tracks nesting and strings (with their escapes) to find where the object ends,
// and leaves the rest to JSON.parse: an entity whose bytes equal those that parsed before is valid JSON, and one
// that differs is parsed on its own. Anything else at the top level (a scalar, an unclosed array, trailing
// bytes) answers null, and the caller parses the whole page, which reports the exact error.

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

const isSpace = (c: number | undefined) => c === SPACE || c === LF || c === CR || c === TAB;

/**
 * The byte ranges of the objects of a JSON array, as [start, end) pairs, or null when the page is not an array
 * of objects at the top level.
 * @example splitObjects(Buffer.from('[{"id":"a"}, {"id":"b"}]')) // Int32Array [1, 11, 13, 23]
 */
export function splitObjects(bytes: Uint8Array): Int32Array | null {
  const n = bytes.length;
  const bounds: number[] = [];
  let i = 0;
  while (isSpace(bytes[i])) i++;
  if (bytes[i++] !== OPEN_ARRAY) return null;
  while (isSpace(bytes[i])) i++;
  if (bytes[i] === CLOSE_ARRAY) i++;
  else {
    for (;;) {
      if (bytes[i] !== OPEN_OBJECT) return null;
      const start = i;
      let depth = 0;
      for (; i < n; i++) {
        const c = bytes[i] as number;
        if (c === QUOTE) {
          for (i++; i < n && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
        } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) depth++;
        else if ((c === CLOSE_OBJECT || c === CLOSE_ARRAY) && --depth === 0) break;
      }
      if (i >= n) return null;
      bounds.push(start, ++i);
      while (isSpace(bytes[i])) i++;
      if (bytes[i] === CLOSE_ARRAY) {
        i++;
        break;
      }
      if (bytes[i++] !== COMMA) return null;
      while (isSpace(bytes[i])) i++;
    }
  }
  while (isSpace(bytes[i])) i++;
  return i === n ? Int32Array.from(bounds) : null;
}
