// Android `res/values/strings.xml`: <string>, <string-array> items and <plurals> (one <item quantity> per CLDR
// category of the target). `translatable="false"` strings and resource references (`@string/x`) are left alone.
// Android's own escaping (\' \" \n \t \@ \? \uXXXX, double-quoted spans) is resolved for the provider and written
// back, and styling tags (<b>, <xliff:g …>) are the source's own markup, kept as markup.
import { pluralCategories, type ValidationIssue } from '../language/index.ts';
import { buildPluralIcu, CATEGORY_ORDER } from './icu-plural.ts';
import { looksIcu } from './json.ts';
import { pluralFormsFor } from './plural-forms.ts';
import { applySplices, FileParseError, type FileString, type ParsedFile, type Splice } from './types.ts';
import {
  checkWellFormed,
  childElements,
  contentText,
  escapeXmlText,
  keptTagsNest,
  parseXmlTree,
  type XmlElement,
} from './xml.ts';

const TAG = /<\/?[A-Za-z_][^<>]*>/g;

/** Splits `text` at the inline tags in `codes`, mapping the text between them with `f`. */
function mapText(
  text: string,
  codes: ReadonlySet<string>,
  f: (part: string, first: boolean, last: boolean) => string,
): string {
  let out = '';
  let pos = 0;
  let first = true;
  for (const m of text.matchAll(TAG)) {
    if (!codes.has(m[0])) continue;
    out += f(text.slice(pos, m.index), first, false) + m[0];
    first = false;
    pos = m.index + m[0].length;
  }
  return out + f(text.slice(pos), first, true);
}

/**
 * Android's unescaping of one text run (after XML decoding): escapes resolved, double quotes removed, unquoted
 * whitespace collapsed to one space (and dropped at the start of the first run and the end of the last).
 */
export function unescapeAndroid(raw: string, first = true, last = true): string {
  let out = '';
  let quoted = false;
  // A collapsed space waits until something follows it (so a trailing one can be dropped).
  let pending = false;
  const emit = (s: string) => {
    if (pending && (out !== '' || !first)) out += ' ';
    pending = false;
    out += s;
  };
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const e = raw[++i]!;
      if (e === 'n') emit('\n');
      else if (e === 't') emit('\t');
      else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(raw.slice(i + 1, i + 5))) {
        emit(String.fromCharCode(Number.parseInt(raw.slice(i + 1, i + 5), 16)));
        i += 4;
      } else emit(e);
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && /\s/.test(c)) {
      pending = true;
    } else {
      emit(c);
    }
  }
  if (pending && !last && (out !== '' || !first)) out += ' ';
  return out;
}

/** Android's escaping of one text run: what `unescapeAndroid` reads back as `text`. */
export function escapeAndroid(text: string, first = true, last = true): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const collapsible = c === ' ' && ((first && i === 0) || (last && i === text.length - 1) || text[i - 1] === ' ');
    if (collapsible) out += '\\u0020';
    else if (c === '\\' || c === "'" || c === '"') out += `\\${c}`;
    else if (c === '\n') out += '\\n';
    else if (c === '\t') out += '\\t';
    else if ((c === '@' || c === '?') && first && i === 0) out += `\\${c}`;
    else out += c;
  }
  return escapeXmlText(out);
}

const REFERENCE = /^@(\+)?([\w.]+:)?[\w]+\/[\w.]+$/;

interface Entry {
  key: string;
  kind: 'string' | 'item' | 'plurals';
  element: XmlElement;
  /** <plurals>: quantity → item. */
  items?: Map<string, XmlElement>;
  codes: Set<string>;
  forms?: Record<string, string>;
  text: string;
}

/** The text of one <string> or <item> for the provider. */
function read(content: string, el: XmlElement, codes: Set<string>): string {
  return mapText(contentText(content, el, codes), codes, unescapeAndroid);
}

/** Android strings.xml. */
export function parseAndroid(content: string): ParsedFile {
  checkWellFormed(content);
  const root = parseXmlTree(content);
  if (root.name !== 'resources') throw new FileParseError(1, 'the root element is not <resources>');
  const entries: Entry[] = [];
  const seen = new Set<string>();
  const line = (el: XmlElement) => content.slice(0, el.start).split('\n').length;
  for (const el of childElements(root)) {
    const name = el.attrs.get('name');
    if (!['string', 'string-array', 'plurals'].includes(el.name)) continue;
    if (!name) throw new FileParseError(line(el), `<${el.name}> without a name`);
    if (el.attrs.get('translatable') === 'false') continue;
    const product = el.attrs.get('product');
    const key = product ? `${name}[product=${product}]` : name;
    if (seen.has(key)) throw new FileParseError(line(el), `duplicate resource name "${key}"`);
    seen.add(key);
    if (el.name === 'string') {
      const codes = new Set<string>();
      const text = read(content, el, codes);
      if (REFERENCE.test(text.trim())) continue;
      entries.push({ key, kind: 'string', element: el, codes, text });
    } else if (el.name === 'string-array') {
      childElements(el, 'item').forEach((item, i) => {
        const codes = new Set<string>();
        const text = read(content, item, codes);
        if (!REFERENCE.test(text.trim()))
          entries.push({ key: `${key}[${i}]`, kind: 'item', element: item, codes, text });
      });
    } else {
      const items = new Map<string, XmlElement>();
      const codes = new Set<string>();
      const forms: Record<string, string> = {};
      for (const item of childElements(el, 'item')) {
        const q = item.attrs.get('quantity');
        if (!q || !['zero', 'one', 'two', 'few', 'many', 'other'].includes(q)) {
          throw new FileParseError(
            line(item),
            `<plurals name="${name}"> item with quantity "${(q ?? '').slice(0, 10)}"`,
          );
        }
        items.set(q, item);
        forms[q] = read(content, item, codes);
      }
      if (!forms.other) throw new FileParseError(line(el), `<plurals name="${name}"> has no quantity="other"`);
      entries.push({ key, kind: 'plurals', element: el, items, codes, forms, text: buildPluralIcu(forms) });
    }
  }
  const strings: FileString[] = entries.map((e) => ({
    key: e.key,
    text: e.text,
    isIcu: e.kind === 'plurals' || looksIcu(e.text),
    ...(e.kind === 'plurals' ? { plural: true } : {}),
  }));
  return {
    format: 'android',
    strings,
    write(translations, targetLocale) {
      const issues: ValidationIssue[] = [];
      const splices: Splice[] = [];
      const toXml = (text: string, codes: ReadonlySet<string>) => mapText(text, codes, escapeAndroid);
      entries.forEach((e, i) => {
        const t = translations.get(e.key);
        if (e.kind !== 'plurals') {
          if (t === undefined) return;
          const xml = toXml(t, e.codes);
          if (!keptTagsNest(t, e.codes)) {
            issues.push({
              itemId: e.key,
              code: 'tag_unbalanced',
              message: 'the tags of the translation do not nest; left untranslated',
            });
            return;
          }
          splices.push({ start: e.element.openEnd, end: e.element.closeStart, text: xml });
          return;
        }
        const cldr = pluralCategories(targetLocale, 'cardinal') ?? ['other'];
        const needed = CATEGORY_ORDER.filter((c) => cldr.includes(c));
        const forms = pluralFormsFor(strings[i]!, t, needed, targetLocale, issues, e.forms!);
        const items = [...e.items!.values()];
        const first = items[0]!;
        const gap = /\n[ \t]*$/.exec(content.slice(e.element.openEnd, first.start))?.[0] ?? '';
        const rendered = needed.map((c) => {
          const xml = toXml(forms[c]!, e.codes);
          return `<item quantity="${c}">${keptTagsNest(forms[c]!, e.codes) ? xml : escapeXmlText(forms[c]!)}</item>`;
        });
        splices.push({ start: first.start, end: items.at(-1)!.end, text: rendered.join(gap) });
      });
      return { content: applySplices(content, splices), issues };
    },
  };
}
