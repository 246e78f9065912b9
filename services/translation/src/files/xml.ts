// XML for the XML formats (XLIFF, Android, TMX): saxes checks that a document is well-formed (and answers the line and
// the reason when it is not); then a small tokenizer, which may assume well-formed input, builds a tree with the
// offsets of every tag, so a writer changes only the spans it means to and the rest of the file stays byte for byte.
import { SaxesParser } from 'saxes';
import { FileParseError, lineAt } from './types.ts';

export interface XmlElement {
  name: string;
  attrs: ReadonlyMap<string, string>;
  /** Offset of `<` of the start tag. */
  start: number;
  /** Offset after `>` of the start tag. */
  openEnd: number;
  /** Offset of `<` of the end tag (= openEnd for an empty-element tag). */
  closeStart: number;
  /** Offset after the element. */
  end: number;
  selfClosing: boolean;
  children: XmlNode[];
}

export type XmlNode =
  | { kind: 'element'; element: XmlElement }
  | { kind: 'text'; start: number; end: number; text: string }
  | { kind: 'cdata'; start: number; end: number; text: string };

/** Throws FileParseError (line, reason) unless `text` is a well-formed XML document. No DTD entity is expanded. */
export function checkWellFormed(text: string): void {
  const parser = new SaxesParser({ xmlns: false, position: true });
  let failure: FileParseError | null = null;
  parser.on('error', (e) => {
    if (!failure) {
      // saxes prefixes its messages with "line:column: ".
      const m = /^(\d+):(\d+): (.*)$/s.exec(e.message);
      failure = new FileParseError(m ? Number(m[1]) : parser.line, m ? m[3]!.split('\n')[0]! : e.message);
    }
  });
  parser.on('doctype', (doctype) => {
    // An internal subset may declare entities: refused, so nothing is ever expanded (billion laughs, XXE).
    if (doctype.includes('[') && !failure)
      failure = new FileParseError(parser.line, 'a DOCTYPE with an internal subset is not accepted');
  });
  try {
    parser.write(text).close();
  } catch (e) {
    if (!failure) failure = new FileParseError(parser.line, e instanceof Error ? e.message : 'not well-formed XML');
  }
  if (failure) throw failure;
}

/** Deeper documents are refused (the tree walks recurse; no locale file nests like this). */
export const MAX_DEPTH = 200;

const ATTR = /([^\s=/>]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
/** The attributes of every element that has none (most of a file's: one map, not thousands). */
const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map();
/** An element's name, from just after its `<`. */
const NAME = /[^\s/>]+/y;

/** Decodes the five predefined entities and character references. */
export function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, e: string) => {
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'amp') return '&';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    return String.fromCodePoint(e[1] === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });
}

const MARKUP = /[&<>]/;
/** Escapes text content (`&`, `<`, `>`). */
export const escapeXmlText = (s: string) =>
  MARKUP.test(s) ? s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : s;
/** Escapes an attribute value in double quotes. */
export const escapeXmlAttr = (s: string) => escapeXmlText(s).replace(/"/g, '&quot;');

/**
 * The root element of a well-formed document (check it with `checkWellFormed` first), with offsets.
 * Comments, processing instructions and the DOCTYPE are skipped (they stay in the file untouched).
 */
export function parseXmlTree(text: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  let pos = 0;
  while (pos < text.length) {
    const lt = text.indexOf('<', pos);
    if (lt < 0) break;
    const parent = stack.at(-1);
    if (lt > pos && parent) {
      const raw = text.slice(pos, lt);
      parent.children.push({ kind: 'text', start: pos, end: lt, text: raw.includes('&') ? decodeXml(raw) : raw });
    }
    const next = text.charCodeAt(lt + 1);
    if (next === 33 /* ! */ && text.startsWith('<!--', lt)) {
      pos = text.indexOf('-->', lt + 4) + 3;
    } else if (next === 33 && text.startsWith('<![CDATA[', lt)) {
      const end = text.indexOf(']]>', lt + 9);
      parent?.children.push({ kind: 'cdata', start: lt, end: end + 3, text: text.slice(lt + 9, end) });
      pos = end + 3;
    } else if (next === 63 /* ? */) {
      pos = text.indexOf('?>', lt + 2) + 2;
    } else if (next === 33) {
      pos = text.indexOf('>', lt) + 1;
    } else if (next === 47 /* / */) {
      const gt = text.indexOf('>', lt);
      const el = stack.pop()!;
      el.closeStart = lt;
      el.end = gt + 1;
      pos = gt + 1;
    } else {
      // A start tag: find its `>` outside quoted attribute values.
      let i = lt + 1;
      let quote = 0;
      for (; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (quote) {
          if (c === quote) quote = 0;
        } else if (c === 34 || c === 39) quote = c;
        else if (c === 62) break;
      }
      const selfClosing = text.charCodeAt(i - 1) === 47;
      const innerEnd = selfClosing ? i - 1 : i;
      NAME.lastIndex = lt + 1;
      const name = NAME.exec(text)![0].slice(0, innerEnd - lt - 1);
      let attrs = NO_ATTRIBUTES;
      if (lt + 1 + name.length < innerEnd) {
        const map = new Map<string, string>();
        for (const m of text.slice(lt + 1 + name.length, innerEnd).matchAll(ATTR)) {
          const value = m[2] ?? m[3] ?? '';
          map.set(m[1]!, value.includes('&') ? decodeXml(value) : value);
        }
        attrs = map;
      }
      const el: XmlElement = {
        name,
        attrs,
        start: lt,
        openEnd: i + 1,
        closeStart: i + 1,
        end: i + 1,
        selfClosing,
        children: [],
      };
      if (!parent) root = el;
      else parent.children.push({ kind: 'element', element: el });
      if (!selfClosing) stack.push(el);
      if (stack.length > MAX_DEPTH)
        throw new FileParseError(lineAt(text, lt), `elements nested deeper than ${MAX_DEPTH} levels`);
      pos = i + 1;
    }
  }
  if (!root) throw new FileParseError(1, 'no root element');
  return root;
}

/** Child elements of `el` named `name` (local name, any prefix when `name` has none). */
export function childElements(el: XmlElement, name?: string): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of el.children) {
    if (c.kind === 'element' && (name === undefined || c.element.name === name)) out.push(c.element);
  }
  return out;
}

/** Every descendant element named `name`, in document order. */
export function descendants(el: XmlElement, name: string): XmlElement[] {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    for (const c of e.children) {
      if (c.kind !== 'element') continue;
      if (c.element.name === name) out.push(c.element);
      walk(c.element);
    }
  };
  walk(el);
  return out;
}

/**
 * The content of `el` as translatable text: text and CDATA decoded; child elements (inline codes) kept as their raw
 * markup, so they travel as tags the provider must keep. `codes` receives each inline tag's raw text.
 */
export function contentText(source: string, el: XmlElement, codes: Set<string>): string {
  let out = '';
  const walk = (e: XmlElement) => {
    for (const c of e.children) {
      if (c.kind === 'text' || c.kind === 'cdata') out += c.text;
      else {
        const child = c.element;
        const open = source.slice(child.start, child.openEnd);
        codes.add(open);
        out += open;
        if (!child.selfClosing) {
          walk(child);
          const close = source.slice(child.closeStart, child.end);
          codes.add(close);
          out += close;
        }
      }
    }
  };
  walk(el);
  return out;
}

/** The source's own inline tags in a translation, and the translation as XML content. */
export interface KeptMarkup {
  /** The text as XML content: the kept tags as markup, everything else escaped. */
  xml: string;
  /** The kept tags, in order. */
  tags: string[];
  /** Whether the kept tags nest (then `xml` is well-formed). */
  nests: boolean;
}

/**
 * Translated text back to XML: the source's own inline tags (exact spellings in `codes`) found in `text` as
 * `<\/?[A-Za-z_][^<>]*>` finds them, left to right, are kept as markup; everything else is escaped as text. One scan
 * gives the content, the kept tags and whether they nest.
 * @example keptMarkup('a <b>x</b> & <c>', new Set(['<b>', '</b>'])) // { xml: 'a <b>x</b> &amp; &lt;c&gt;', tags: ['<b>', '</b>'], nests: true }
 */
export function keptMarkup(text: string, codes: ReadonlySet<string>): KeptMarkup {
  const tags: string[] = [];
  if (codes.size === 0 || !text.includes('<')) return { xml: escapeXmlText(text), tags, nests: true };
  const open: string[] = [];
  let nests = true;
  let xml = '';
  let pos = 0;
  for (let lt = text.indexOf('<'); lt >= 0; ) {
    const end = tagEnd(text, lt);
    if (end < 0) {
      lt = text.indexOf('<', lt + 1);
      continue;
    }
    const tag = text.slice(lt, end);
    if (codes.has(tag)) {
      xml += escapeXmlText(text.slice(pos, lt)) + tag;
      pos = end;
      tags.push(tag);
      if (!tag.endsWith('/>')) {
        const closing = tag.charCodeAt(1) === 47;
        TAG_NAME.lastIndex = closing ? 2 : 1;
        const name = TAG_NAME.exec(tag)![0];
        if (!closing) open.push(name);
        else if (open.pop() !== name) nests = false;
      }
    }
    lt = text.indexOf('<', end);
  }
  return { xml: xml + escapeXmlText(text.slice(pos)), tags, nests: nests && open.length === 0 };
}

/** A tag's name, after its `<` or `</`. */
const TAG_NAME = /[^\s/>]*/y;

/** The end (after `>`) of the tag `<\/?[A-Za-z_][^<>]*>` matches at `lt`, or -1 when it matches none there. */
function tagEnd(text: string, lt: number): number {
  let i = lt + 1;
  if (text.charCodeAt(i) === 47) i++;
  const c = text.charCodeAt(i);
  if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95)) return -1;
  for (i++; i < text.length; i++) {
    const d = text.charCodeAt(i);
    if (d === 62) return i + 1;
    if (d === 60) return -1;
  }
  return -1;
}

/** `keptMarkup(text, codes).xml`: the text as XML content, the source's own tags kept as markup. */
export const toXmlContent = (text: string, codes: ReadonlySet<string>): string => keptMarkup(text, codes).xml;

/** The pattern of each attribute `withAttribute` has set (a handful of names: state, trgLang, target-language). */
const attributePatterns = new Map<string, RegExp>();

/** A start tag with `attr` set to `value` (added or replaced), the rest of the tag as it was. */
export function withAttribute(source: string, el: XmlElement, attr: string, value: string): string {
  const tag = source.slice(el.start, el.openEnd);
  const escaped = escapeXmlAttr(value);
  let re = attributePatterns.get(attr);
  if (!re) {
    re = new RegExp(`(\\s${attr.replace(/[.:-]/g, '\\$&')}\\s*=\\s*)(?:"[^"]*"|'[^']*')`);
    attributePatterns.set(attr, re);
  }
  if (re.test(tag)) return tag.replace(re, `$1"${escaped}"`);
  const close = el.selfClosing ? tag.length - 2 : tag.length - 1;
  return `${tag.slice(0, close).replace(/\s+$/, '')} ${attr}="${escaped}"${tag.slice(close)}`;
}

/**
 * Whether the source's own tags kept in `text` (the only markup `toXmlContent` writes; all else is escaped) nest, so
 * the written content is well-formed.
 */
export const keptTagsNest = (text: string, codes: ReadonlySet<string>): boolean =>
  codes.size === 0 || keptMarkup(text, codes).nests;
