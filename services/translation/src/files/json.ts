// i18next/ICU message JSON (flat or nested) and Flutter ARB. Strings are replaced where they stand (the file's
// layout, key order and nesting stay byte for byte); ARB's `@key` metadata is kept and `@@locale` set.
import { type Node, type ParseError, parseTree, printParseErrorCode } from 'jsonc-parser';
import { parseIcu } from '../language/index.ts';
import { validJsonTree } from './json-tree.ts';
import { applySplices, FileParseError, type FileString, lineAt, type ParsedFile, type Splice } from './types.ts';

/** Whether a value is an ICU message worth parsing as one: valid ICU with at least one argument, plural or select. */
export function looksIcu(text: string): boolean {
  if (!text.includes('{')) return false;
  const parsed = parseIcu(text);
  return parsed.ok && parsed.ast.some((el) => el.type !== 0);
}

/** Deeper documents are refused before parsing (the parser and the walk recurse). */
const MAX_DEPTH = 200;

function checkDepth(content: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (++depth > MAX_DEPTH) throw new FileParseError(lineAt(content, i), `nested deeper than ${MAX_DEPTH} levels`);
    } else if (c === '}' || c === ']') depth--;
  }
}

function parseJson(content: string): Node {
  const valid = validJsonTree(content, MAX_DEPTH);
  if (valid) {
    if (valid.type !== 'object') throw new FileParseError(1, 'the file must be a JSON object');
    return valid;
  }
  // Not valid JSON: jsonc-parser finds the error and its place.
  checkDepth(content);
  const errors: ParseError[] = [];
  const root = parseTree(content, errors, { disallowComments: true, allowTrailingComma: false });
  const first = errors[0];
  if (first)
    throw new FileParseError(lineAt(content, first.offset), `invalid JSON: ${printParseErrorCode(first.error)}`);
  if (root?.type !== 'object') throw new FileParseError(1, 'the file must be a JSON object');
  return root;
}

const keyOf = (prop: Node) => String(prop.children![0]!.value);

/** Key paths are joined with `.`; a key holding `.` or `\` is escaped so paths stay unique. */
const joinKey = (prefix: string, key: string) => {
  const part = key.includes('.') || key.includes('\\') ? key.replace(/[\\.]/g, (c) => `\\${c}`) : key;
  return prefix ? `${prefix}.${part}` : part;
};

interface Located {
  key: string;
  node: Node;
}

/** Every string value of an object tree, depth first in file order (arrays: index keys). */
function strings(node: Node, prefix: string, skip: (key: string, depth: number) => boolean): Located[] {
  const out: Located[] = [];
  const walk = (node: Node, prefix: string, depth: number) => {
    const children = node.children ?? [];
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      let key: string;
      let value: Node | undefined;
      if (node.type === 'object') {
        key = keyOf(child);
        value = child.children?.[1];
        if (skip(key, depth)) continue;
      } else {
        key = String(i);
        value = child;
      }
      if (!value) continue;
      const path = joinKey(prefix, key);
      if (value.type === 'string') out.push({ key: path, node: value });
      else if (value.type === 'object' || value.type === 'array') walk(value, path, depth + 1);
    }
  };
  walk(node, prefix, 0);
  return out;
}

/** i18next/ICU message JSON. */
export function parseMessageJson(content: string): ParsedFile {
  const root = parseJson(content);
  const found = strings(root, '', () => false);
  return {
    format: 'json',
    strings: found.map(({ key, node }) => fileString(key, String(node.value))),
    write(translations) {
      const splices: Splice[] = [];
      for (const { key, node } of found) {
        const t = translations.get(key);
        if (t !== undefined)
          splices.push({ start: node.offset, end: node.offset + node.length, text: JSON.stringify(t) });
      }
      return { content: applySplices(content, splices), issues: [] };
    },
  };
}

function fileString(key: string, text: string, context?: string): FileString {
  return { key, text, isIcu: looksIcu(text), ...(context ? { context } : {}) };
}

/** Flutter ARB: top-level messages, `@key` metadata (description, placeholders) kept, `@@locale` set to the target. */
export function parseArb(content: string): ParsedFile {
  const root = parseJson(content);
  const props = root.children ?? [];
  const meta = new Map<string, Node>();
  for (const p of props) {
    const k = keyOf(p);
    if (k.startsWith('@') && !k.startsWith('@@') && p.children?.[1]?.type === 'object')
      meta.set(k.slice(1), p.children[1]);
  }
  const found: Located[] = [];
  for (const p of props) {
    const k = keyOf(p);
    const value = p.children?.[1];
    if (k.startsWith('@') || value?.type !== 'string') continue;
    found.push({ key: k, node: value });
  }
  const description = (key: string): string | undefined => {
    const d = meta.get(key)?.children?.find((c) => keyOf(c) === 'description')?.children?.[1];
    return d?.type === 'string' ? String(d.value) : undefined;
  };
  const localeProp = props.find((p) => keyOf(p) === '@@locale');
  return {
    format: 'arb',
    strings: found.map(({ key, node }) => {
      const text = String(node.value);
      // ARB messages are ICU by definition: a message that parses is sent as ICU.
      const s = fileString(key, text, description(key));
      return { ...s, isIcu: parseIcu(text).ok && text.includes('{') };
    }),
    write(translations, targetLocale) {
      const splices: Splice[] = [];
      for (const { key, node } of found) {
        const t = translations.get(key);
        if (t !== undefined)
          splices.push({ start: node.offset, end: node.offset + node.length, text: JSON.stringify(t) });
      }
      const value = localeProp?.children?.[1];
      if (value)
        splices.push({ start: value.offset, end: value.offset + value.length, text: JSON.stringify(targetLocale) });
      let out = applySplices(content, splices);
      if (!value) {
        // No @@locale yet: add it as the first member, in the file's own indentation.
        const open = content.indexOf('{', root.offset);
        const indent = /\n([ \t]+)"/.exec(content)?.[1] ?? '  ';
        const empty = props.length === 0;
        out = `${out.slice(0, open + 1)}\n${indent}"@@locale": ${JSON.stringify(targetLocale)}${empty ? '\n' : ','}${out.slice(open + 1)}`;
      }
      return { content: out, issues: [] };
    },
  };
}
