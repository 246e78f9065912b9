// The tree of a JSON document that the platform's JSON.parse accepts, in jsonc-parser's node shape (offsets of every
// value, members in file order, duplicate keys kept), built in one pass over text known to be valid. It is the same
// tree jsonc-parser's tolerant parser builds (json-tree.test.ts compares them), several times faster; a document
// JSON.parse refuses goes to jsonc-parser, whose errors give the line and the reason.
import type { Node } from 'jsonc-parser';
import { FileParseError, lineAt } from './types.ts';

/**
 * The tree of `text`, or null when `text` is not valid JSON. Containers nested deeper than `maxDepth` are refused
 * with the line of the first one, as a scan of the whole text would refuse them.
 * @example validJsonTree('{"a": "b"}', 200)?.children?.[0]?.children?.[1] // { type: 'string', offset: 6, length: 3, value: 'b' }
 */
export function validJsonTree(text: string, maxDepth: number): Node | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  let i = 0;
  const skipSpace = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else return;
    }
  };
  // At an opening quote: the string node, `i` after its closing quote.
  const string = (): Node => {
    const start = i;
    let end = text.indexOf('"', start + 1);
    while (text.charCodeAt(end - 1) === 92 && escaped(text, end)) end = text.indexOf('"', end + 1);
    i = end + 1;
    const raw = text.slice(start + 1, end);
    const value = raw.includes('\\') ? (JSON.parse(text.slice(start, i)) as string) : raw;
    return { type: 'string', offset: start, length: i - start, value };
  };
  const value = (depth: number): Node => {
    skipSpace();
    const start = i;
    const c = text.charCodeAt(i);
    if (c === 34) return string();
    if (c === 123 || c === 91) {
      if (depth >= maxDepth) throw new FileParseError(lineAt(text, i), `nested deeper than ${maxDepth} levels`);
      const object = c === 123;
      const children: Node[] = [];
      i++;
      skipSpace();
      if (text.charCodeAt(i) === (object ? 125 : 93)) i++;
      else {
        for (;;) {
          if (object) {
            skipSpace();
            const key = string();
            skipSpace();
            i++; // the colon
            const v = value(depth + 1);
            children.push({
              type: 'property',
              offset: key.offset,
              length: v.offset + v.length - key.offset,
              children: [key, v],
            });
          } else children.push(value(depth + 1));
          skipSpace();
          // A comma, or the container's end.
          if (text.charCodeAt(i++) !== 44) break;
        }
      }
      return { type: object ? 'object' : 'array', offset: start, length: i - start, children };
    }
    // A number or a literal: up to the next delimiter.
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === 44 || d === 125 || d === 93 || d === 32 || d === 10 || d === 13 || d === 9) break;
      i++;
    }
    const token = text.slice(start, i);
    if (token === 'true' || token === 'false')
      return { type: 'boolean', offset: start, length: i - start, value: token === 'true' };
    if (token === 'null') return { type: 'null', offset: start, length: i - start, value: null };
    return { type: 'number', offset: start, length: i - start, value: Number(token) };
  };
  return value(0);
}

/** Whether the quote at `at` is escaped: an odd number of backslashes before it. */
function escaped(text: string, at: number): boolean {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 92) n++;
  return n % 2 === 1;
}
