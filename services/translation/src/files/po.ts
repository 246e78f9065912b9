// gettext PO/POT. Comments, flags, references, msgctxt and msgid lines stay as they are; only the msgstr lines of each
// entry are written, and the header's `Language` and `Plural-Forms` are set for the target. A plural entry
// (msgid_plural) travels as one ICU plural (msgid → one, msgid_plural → other) and comes back as one msgstr[i] per
// gettext form of the target (gettext-plural.ts: the CLDR categories integers reach, from Intl.PluralRules).
import type { ValidationIssue } from '../language/index.ts';
import { gettextPlurals, parsePluralForms, pluralFormsHeader } from './gettext-plural.ts';
import { buildPluralIcu } from './icu-plural.ts';
import { looksIcu } from './json.ts';
import { pluralFormsFor } from './plural-forms.ts';
import { FileParseError, type FileString, type ParsedFile } from './types.ts';

interface Entry {
  /** Index (0-based) of the entry's first line. */
  firstLine: number;
  msgctxt?: string;
  msgid?: string;
  msgidPlural?: string;
  msgstr: string[];
  /** Lines [msgstrStart, msgstrEnd) hold the msgstr fields (replaced on write). */
  msgstrStart: number;
  msgstrEnd: number;
  flags: string[];
  obsolete: boolean;
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  '"': '"',
  '\\': '\\',
  '?': '?',
  "'": "'",
};

function unquote(raw: string, line: number): string {
  const m = /^"((?:[^"\\]|\\.)*)"\s*$/.exec(raw);
  if (!m) throw new FileParseError(line, 'expected a quoted string');
  return m[1]!.replace(/\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e in ESCAPES) return ESCAPES[e]!;
    if (e[0] === 'x') return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (/^[0-7]/.test(e)) return String.fromCharCode(Number.parseInt(e, 8));
    throw new FileParseError(line, `unknown escape \\${e}`);
  });
}

const escapePo = (s: string) =>
  s.replace(/[\\"\n\t\r]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c]!);

/** `keyword "text"` lines, gettext style: one line, or `""` then one line per `\n`. */
function field(keyword: string, text: string): string[] {
  const parts = text.split(/(?<=\n)/);
  if (parts.length <= 1) return [`${keyword} "${escapePo(text)}"`];
  return [`${keyword} ""`, ...parts.map((p) => `"${escapePo(p)}"`)];
}

function parseEntries(lines: string[]): Entry[] {
  const entries: Entry[] = [];
  let cur: Entry | null = null;
  let target: { kind: 'msgctxt' | 'msgid' | 'msgid_plural' | 'msgstr'; index: number } | null = null;
  const fresh = (i: number): Entry => ({
    firstLine: i,
    msgstr: [],
    msgstrStart: -1,
    msgstrEnd: -1,
    flags: [],
    obsolete: false,
  });
  const finish = () => {
    if (cur && (cur.msgid !== undefined || cur.obsolete)) entries.push(cur);
    cur = null;
    target = null;
  };
  lines.forEach((rawLine, i) => {
    const n = i + 1;
    const line = rawLine.replace(/\r$/, '').trim();
    if (line === '') {
      if (cur?.msgid !== undefined && cur.msgstrStart >= 0) finish();
      return;
    }
    if (line.startsWith('#~')) {
      if (cur && cur.msgid !== undefined) finish();
      cur ??= fresh(i);
      cur.obsolete = true;
      return;
    }
    if (line.startsWith('#')) {
      if (cur && cur.msgstrStart >= 0) finish();
      cur ??= fresh(i);
      if (line.startsWith('#,'))
        cur.flags.push(
          ...line
            .slice(2)
            .split(',')
            .map((f) => f.trim())
            .filter(Boolean),
        );
      return;
    }
    if (line.startsWith('"')) {
      if (!cur || !target) throw new FileParseError(n, 'a string continuation outside an entry');
      const text = unquote(line, n);
      if (target.kind === 'msgstr') {
        cur.msgstr[target.index] += text;
        cur.msgstrEnd = i + 1;
      } else if (target.kind === 'msgctxt') cur.msgctxt += text;
      else if (target.kind === 'msgid') cur.msgid += text;
      else cur.msgidPlural += text;
      return;
    }
    const m = /^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d)\])?)\s+(.*)$/.exec(line);
    if (!m) throw new FileParseError(n, `unknown keyword: ${line.split(/\s/)[0]!.slice(0, 40)}`);
    const keyword = m[1]!;
    const text = unquote(m[3]!, n);
    if (keyword === 'msgctxt' || (keyword === 'msgid' && cur?.msgid !== undefined && cur.msgstrStart >= 0)) {
      if (cur && cur.msgstrStart >= 0) finish();
    }
    if (cur?.obsolete) finish();
    cur ??= fresh(i);
    if (keyword === 'msgctxt') {
      if (cur.msgctxt !== undefined || cur.msgid !== undefined) throw new FileParseError(n, 'msgctxt out of place');
      cur.msgctxt = text;
      target = { kind: 'msgctxt', index: 0 };
    } else if (keyword === 'msgid') {
      if (cur.msgid !== undefined) throw new FileParseError(n, 'msgid without msgstr before it');
      cur.msgid = text;
      target = { kind: 'msgid', index: 0 };
    } else if (keyword === 'msgid_plural') {
      if (cur.msgid === undefined || cur.msgidPlural !== undefined || cur.msgstrStart >= 0)
        throw new FileParseError(n, 'msgid_plural out of place');
      cur.msgidPlural = text;
      target = { kind: 'msgid_plural', index: 0 };
    } else {
      if (cur.msgid === undefined) throw new FileParseError(n, 'msgstr without msgid');
      const index = m[2] === undefined ? -1 : Number(m[2]);
      if (index >= 0 !== (cur.msgidPlural !== undefined))
        throw new FileParseError(n, index >= 0 ? 'msgstr[n] without msgid_plural' : 'a plural entry needs msgstr[n]');
      const at = Math.max(0, index);
      if (index >= 0 && at !== cur.msgstr.length) throw new FileParseError(n, `msgstr[${at}] out of order`);
      if (index < 0 && cur.msgstr.length > 0) throw new FileParseError(n, 'a second msgstr');
      cur.msgstr[at] = text;
      if (cur.msgstrStart < 0) cur.msgstrStart = i;
      cur.msgstrEnd = i + 1;
      target = { kind: 'msgstr', index: at };
    }
  });
  const last = cur as Entry | null;
  if (last && last.msgid !== undefined && last.msgstrStart < 0 && !last.obsolete) {
    throw new FileParseError(last.firstLine + 1, 'the last entry has no msgstr');
  }
  finish();
  for (const e of entries) {
    if (!e.obsolete && e.msgstrStart < 0) throw new FileParseError(e.firstLine + 1, 'an entry without msgstr');
  }
  return entries;
}

interface Header {
  entry: Entry;
  fields: [string, string][];
}

function readHeader(entries: Entry[], lines: string[]): Header | null {
  const entry = entries.find((e) => !e.obsolete && e.msgid === '' && e.msgctxt === undefined);
  if (!entry) return null;
  // The line of the header's msgstr that holds `text` (for the error's line number).
  const lineOf = (text: string) => {
    for (let i = entry.msgstrStart; i < entry.msgstrEnd; i++) if (lines[i]!.includes(text)) return i + 1;
    return entry.msgstrStart + 1;
  };
  const fields: [string, string][] = [];
  for (const [i, line] of (entry.msgstr[0] ?? '').split('\n').entries()) {
    if (line.trim() === '') continue;
    const m = /^([A-Za-z][\w-]*):\s?(.*)$/.exec(line);
    if (!m) throw new FileParseError(lineOf(line.slice(0, 20)), `header line ${i + 1} is not "Name: value"`);
    fields.push([m[1]!, m[2]!]);
  }
  const plural = fields.find(([k]) => k.toLowerCase() === 'plural-forms');
  if (plural) {
    const parsed = parsePluralForms(plural[1]);
    if (parsed && 'error' in parsed) throw new FileParseError(lineOf(plural[0]), parsed.error);
  }
  return { entry, fields };
}

/** The key of an entry in issues: `msgctxt\u0004msgid` (gettext's own spelling), or the msgid. */
const entryKey = (e: Entry) => (e.msgctxt !== undefined ? `${e.msgctxt}\u0004${e.msgid}` : e.msgid!);

/** gettext PO or POT. */
export function parsePo(content: string): ParsedFile {
  const lines = content.split('\n');
  const entries = parseEntries(lines);
  const header = readHeader(entries, lines);
  const messages = entries.filter((e) => !e.obsolete && e !== header?.entry);
  const seen = new Set<string>();
  const strings: FileString[] = messages.map((e, i) => {
    const key = entryKey(e);
    if (seen.has(key)) throw new FileParseError(e.firstLine + 1, 'duplicate message definition');
    seen.add(key);
    const context = e.msgctxt;
    const base = { key, id: `e${i + 1}`, ...(context !== undefined && context !== '' ? { context } : {}) };
    if (e.msgidPlural !== undefined) {
      return { ...base, text: buildPluralIcu({ one: e.msgid!, other: e.msgidPlural }), isIcu: true, plural: true };
    }
    return { ...base, text: e.msgid!, isIcu: !e.flags.includes('c-format') && looksIcu(e.msgid!) };
  });
  return {
    format: 'po',
    strings,
    write(translations, targetLocale) {
      const issues: ValidationIssue[] = [];
      const replace = new Map<number, { end: number; lines: string[] }>();
      const categories = messages.some((e) => e.msgidPlural !== undefined)
        ? gettextPlurals(targetLocale).categories
        : [];
      messages.forEach((e, i) => {
        const s = strings[i]!;
        const t = translations.get(s.key);
        let out: string[];
        if (e.msgidPlural !== undefined) {
          const forms = pluralFormsFor(s, t, categories, targetLocale, issues, { one: e.msgid!, other: e.msgidPlural });
          out = categories.flatMap((c, n) => field(`msgstr[${n}]`, forms[c]!));
        } else {
          out = field('msgstr', t ?? '');
        }
        replace.set(e.msgstrStart, { end: e.msgstrEnd, lines: out });
      });
      const headerFields: [string, string][] = header
        ? [...header.fields]
        : [['Content-Type', 'text/plain; charset=UTF-8']];
      const set = (name: string, value: string) => {
        const at = headerFields.findIndex(([k]) => k.toLowerCase() === name.toLowerCase());
        if (at >= 0) headerFields[at] = [headerFields[at]![0], value];
        else headerFields.push([name, value]);
      };
      set('Language', targetLocale);
      set('Plural-Forms', pluralFormsHeader(targetLocale));
      const headerLines = field('msgstr', headerFields.map(([k, v]) => `${k}: ${v}\n`).join(''));
      if (header) replace.set(header.entry.msgstrStart, { end: header.entry.msgstrEnd, lines: headerLines });
      const out: string[] = header ? [] : ['msgid ""', ...headerLines, ''];
      for (let i = 0; i < lines.length; ) {
        const r = replace.get(i);
        if (r) {
          out.push(...r.lines);
          i = r.end;
        } else out.push(lines[i++]!);
      }
      return { content: out.join('\n'), issues };
    },
  };
}
