// XLIFF 1.2 (<trans-unit>, <source>/<target state>) and 2.x (<unit>/<segment state>, srcLang/trgLang). Units and ids
// stay in place; each target is filled (or added after its source) with the translation, whose inline codes
// (<x/>, <g>, <ph>, <pc>, <sc/>, <ec/>, <mrk>…) are the source's own markup, kept as markup; everything else in a
// translation is escaped as text, so the file always stays well-formed.
import { parseIcu, type ValidationIssue } from '../language/index.ts';
import { applySplices, FileParseError, type FileString, type ParsedFile, type Splice } from './types.ts';
import { checkWellFormed, contentText, keptMarkup, parseXmlTree, withAttribute, type XmlElement } from './xml.ts';

interface Unit {
  key: string;
  /** The 1.2 trans-unit or the 2.x unit (whose notes describe it). */
  unit: XmlElement;
  /** The element whose state is set (1.2: trans-unit's target; 2.x: segment). */
  holder: XmlElement;
  source: XmlElement;
  target: XmlElement | undefined;
  codes: Set<string>;
  text: string;
}

/** Whether `el`'s local name (after its prefix, if any) is `name` (a name without a prefix). */
const isNamed = (el: XmlElement, name: string) => {
  if (el.name === name) return true;
  const colon = el.name.indexOf(':');
  return colon >= 0 && el.name.length - colon - 1 === name.length && el.name.endsWith(name);
};
const named = (el: XmlElement, name: string) => {
  const out: XmlElement[] = [];
  for (const c of el.children) if (c.kind === 'element' && isNamed(c.element, name)) out.push(c.element);
  return out;
};
const firstNamed = (el: XmlElement, name: string): XmlElement | undefined => {
  for (const c of el.children) if (c.kind === 'element' && isNamed(c.element, name)) return c.element;
  return undefined;
};
const allNamed = (el: XmlElement, name: string) => {
  const out: XmlElement[] = [];
  const walk = (e: XmlElement) => {
    for (const c of e.children) {
      if (c.kind !== 'element') continue;
      if (isNamed(c.element, name)) out.push(c.element);
      walk(c.element);
    }
  };
  walk(el);
  return out;
};

/** The inline tags of `text` that are among `codes`, in order (`<x id="1"/>`, `<pc id="2">`, `</pc>`). */
export const inlineCodes = (text: string, codes: ReadonlySet<string>): string[] => keptMarkup(text, codes).tags;

/** Inline codes compared by count; in an ICU message by presence (plural cases repeat them). */
function codeIssues(key: string, source: string[], target: string[], icu: boolean): ValidationIssue[] {
  // The same codes in the same order: nothing missing, nothing extra.
  if (source.length === target.length && source.every((tag, i) => tag === target[i])) return [];
  const count = (list: string[]) =>
    list.reduce((m, t) => m.set(t, icu ? 1 : (m.get(t) ?? 0) + 1), new Map<string, number>());
  const s = count(source);
  const t = count(target);
  const issues: ValidationIssue[] = [];
  const missing = [...s].filter(([tag, n]) => (t.get(tag) ?? 0) < n).map(([tag]) => tag);
  const extra = [...t].filter(([tag, n]) => (s.get(tag) ?? 0) < n).map(([tag]) => tag);
  if (missing.length)
    issues.push({ itemId: key, code: 'inline_code_missing', message: `inline codes missing: ${missing.join(' ')}` });
  if (extra.length)
    issues.push({
      itemId: key,
      code: 'inline_code_extra',
      message: `inline codes repeated or added: ${extra.join(' ')}`,
    });
  return issues;
}

/** XLIFF 1.2 or 2.x. */
export function parseXliff(content: string): ParsedFile {
  checkWellFormed(content);
  const root = parseXmlTree(content);
  if (!isNamed(root, 'xliff')) throw new FileParseError(1, 'the root element is not <xliff>');
  const version = root.attrs.get('version') ?? '';
  const v2 = /^2\./.test(version);
  if (!v2 && !/^1\.[012]$/.test(version))
    throw new FileParseError(1, `unsupported XLIFF version "${version.slice(0, 10)}"`);
  const units: Unit[] = [];
  const seen = new Set<string>();
  const add = (
    key: string,
    unit: XmlElement,
    holder: XmlElement,
    source: XmlElement | undefined,
    target: XmlElement | undefined,
  ) => {
    if (!source) throw new FileParseError(lineOf(content, holder), `unit "${key}" has no <source>`);
    if (seen.has(key)) throw new FileParseError(lineOf(content, holder), `duplicate unit id "${key}"`);
    seen.add(key);
    const codes = new Set<string>();
    units.push({ key, unit, holder, source, target, codes, text: contentText(content, source, codes) });
  };
  const files = named(root, 'file');
  for (const file of files) {
    const fileId = file.attrs.get(v2 ? 'id' : 'original') ?? '';
    const multiFile = files.length > 1;
    const prefix = multiFile ? `${fileId}/` : '';
    if (v2) {
      for (const unit of allNamed(file, 'unit')) {
        if (unit.attrs.get('translate') === 'no') continue;
        const id = unit.attrs.get('id');
        if (!id) throw new FileParseError(lineOf(content, unit), '<unit> without id');
        const segments = named(unit, 'segment');
        segments.forEach((seg, i) => {
          const key = segments.length === 1 ? `${prefix}${id}` : `${prefix}${id}/${seg.attrs.get('id') ?? i + 1}`;
          add(key, unit, seg, firstNamed(seg, 'source'), firstNamed(seg, 'target'));
        });
      }
    } else {
      for (const unit of allNamed(file, 'trans-unit')) {
        if (unit.attrs.get('translate') === 'no') continue;
        const id = unit.attrs.get('id');
        if (!id) throw new FileParseError(lineOf(content, unit), '<trans-unit> without id');
        add(`${prefix}${id}`, unit, unit, firstNamed(unit, 'source'), firstNamed(unit, 'target'));
      }
    }
  }
  const strings: FileString[] = units.map((u) => {
    const notes = firstNamed(u.unit, v2 ? 'notes' : 'note');
    const note = v2 && notes ? firstNamed(notes, 'note') : notes;
    const context = note
      ? contentText(content, note, new Set())
          .replace(/<[^>]*>/g, '')
          .trim()
          .slice(0, 2000)
      : '';
    // Angular and others put ICU plurals in XLIFF sources: sent as ICU when they parse as one.
    const parsed = u.text.includes('{') ? parseIcu(u.text) : null;
    const isIcu = parsed?.ok === true && parsed.ast.some((el) => el.type === 5 || el.type === 6);
    return { key: u.key, text: u.text, isIcu, ...(context ? { context } : {}) };
  });
  return {
    format: 'xliff',
    strings,
    write(translations, targetLocale) {
      const issues: ValidationIssue[] = [];
      const splices: Splice[] = [];
      if (v2)
        splices.push({
          start: root.start,
          end: root.openEnd,
          text: withAttribute(content, root, 'trgLang', targetLocale),
        });
      else {
        for (const file of named(root, 'file')) {
          splices.push({
            start: file.start,
            end: file.openEnd,
            text: withAttribute(content, file, 'target-language', targetLocale),
          });
        }
      }
      units.forEach((u, index) => {
        const t = translations.get(u.key);
        if (t === undefined) return;
        const kept = keptMarkup(t, u.codes);
        if (!kept.nests) {
          issues.push({
            itemId: u.key,
            code: 'tag_unbalanced',
            message: 'the inline codes of the translation do not nest; the unit is left untranslated',
          });
          return;
        }
        const found = codeIssues(u.key, inlineCodes(u.text, u.codes), kept.tags, strings[index]!.isIcu);
        const xml = kept.xml;
        if (found.length) issues.push(...found);
        const state = v2 ? 'translated' : found.length ? 'needs-review-translation' : 'translated';
        if (v2)
          splices.push({
            start: u.holder.start,
            end: u.holder.openEnd,
            text: withAttribute(content, u.holder, 'state', state),
          });
        if (u.target) {
          const open = v2
            ? content.slice(u.target.start, u.target.openEnd)
            : withAttribute(content, u.target, 'state', state);
          const tag = u.target.selfClosing ? open.replace(/\s*\/>$/, '>') : open;
          splices.push({ start: u.target.start, end: u.target.end, text: `${tag}${xml}</${u.target.name}>` });
        } else {
          const indent = indentBefore(content, u.source);
          const name = u.source.name.endsWith('source') ? `${u.source.name.slice(0, -6)}target` : u.source.name;
          const attrs = v2 ? '' : ` state="${state}"`;
          splices.push({ start: u.source.end, end: u.source.end, text: `${indent}<${name}${attrs}>${xml}</${name}>` });
        }
      });
      return { content: applySplices(content, splices), issues };
    },
  };
}

function lineOf(content: string, el: XmlElement): number {
  let line = 1;
  for (let i = 0; i < el.start; i++) if (content.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * The whitespace (newline and indentation) in front of an element, to put a sibling after it the same way: a newline
 * within the 200 characters before it, then only spaces and tabs.
 */
function indentBefore(content: string, el: XmlElement): string {
  let i = el.start;
  while (i > 0 && (content.charCodeAt(i - 1) === 32 || content.charCodeAt(i - 1) === 9)) i--;
  const newline = i - 1;
  return newline >= Math.max(0, el.start - 200) && content.charCodeAt(newline) === 10
    ? content.slice(newline, el.start)
    : '';
}
