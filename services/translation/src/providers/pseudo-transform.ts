import { type MessageFormatElement, TYPE } from '@formatjs/icu-messageformat-parser';
import {
  droppedPluralCases,
  findTerm,
  type GlossaryEntry,
  parseIcu,
  pluralCategories,
  scanProtected,
  walkIcu,
} from '../language/index.ts';

const ACCENTS: Record<string, string> = {
  a: 'å',
  b: 'ƀ',
  c: 'ç',
  d: 'ð',
  e: 'é',
  f: 'ƒ',
  g: 'ĝ',
  h: 'ĥ',
  i: 'î',
  j: 'ĵ',
  k: 'ķ',
  l: 'ļ',
  m: 'ɱ',
  n: 'ñ',
  o: 'ö',
  p: 'þ',
  q: 'ǫ',
  r: 'ŕ',
  s: 'š',
  t: 'ţ',
  u: 'û',
  v: 'ṽ',
  w: 'ŵ',
  x: 'ẋ',
  y: 'ý',
  z: 'ž',
  A: 'Å',
  B: 'Ɓ',
  C: 'Ç',
  D: 'Ð',
  E: 'É',
  F: 'Ƒ',
  G: 'Ĝ',
  H: 'Ĥ',
  I: 'Î',
  J: 'Ĵ',
  K: 'Ķ',
  L: 'Ļ',
  M: 'Ṁ',
  N: 'Ñ',
  O: 'Ö',
  P: 'Þ',
  Q: 'Ǫ',
  R: 'Ŕ',
  S: 'Ŝ',
  T: 'Ţ',
  U: 'Û',
  V: 'Ṽ',
  W: 'Ŵ',
  X: 'Ẋ',
  Y: 'Ý',
  Z: 'Ž',
};

/** Expansion: about 30% more characters, as translations into German or Finnish often need. */
const EXPANSION = 0.3;

export interface PseudoOptions {
  isIcu?: boolean;
  /** Plural categories of this locale are completed in ICU plurals (copies of `other`). Default 'en'. */
  targetLocale?: string;
  glossary?: GlossaryEntry[];
  /** Accent letters (default true). Off: only brackets, padding and glossary targets — cheap in tokens. */
  accents?: boolean;
}

function accentLetters(text: string): string {
  let out = '';
  for (const ch of text) out += ACCENTS[ch] ?? ch;
  return out;
}

/** Count of characters that get accented (the basis of the expansion). */
function letters(text: string): number {
  return text.match(/\p{L}/gu)?.length ?? 0;
}

interface Span {
  start: number;
  end: number;
  replacement: string;
}

/**
 * Transform a run of plain text (a non-ICU string, or one ICU literal in its raw spelling): accent letters,
 * keep protected tokens (tags, placeholders, entities, URLs) and neverTranslate terms, put glossary targets in.
 */
function transformText(
  raw: string,
  icu: boolean,
  glossary: GlossaryEntry[],
  accents: boolean,
): { text: string; letters: number } {
  const accent = accents ? accentLetters : (t: string) => t;
  const spans: Span[] = scanProtected(raw, { icu }).map((t) => ({ start: t.start, end: t.end, replacement: t.text }));
  // Characters already claimed by a protected token or a longer glossary term (linear, not pairwise).
  const taken = new Uint8Array(raw.length);
  for (const s of spans) taken.fill(1, s.start, s.end);
  const terms = [...glossary].filter((g) => g.term.trim() !== '').sort((a, b) => b.term.length - a.term.length);
  for (const entry of terms) {
    for (const hit of findTerm(raw, entry.term)) {
      if (taken.subarray(hit.start, hit.end).includes(1)) continue;
      taken.fill(1, hit.start, hit.end);
      const keep = entry.neverTranslate || entry.target === null || entry.target.trim() === '';
      spans.push({ start: hit.start, end: hit.end, replacement: keep ? hit.text : entry.target! });
    }
  }
  spans.sort((a, b) => a.start - b.start);
  let out = '';
  let pos = 0;
  let count = 0;
  for (const s of spans) {
    const plain = raw.slice(pos, s.start);
    count += letters(plain);
    out += accent(plain) + s.replacement;
    pos = s.end;
  }
  const rest = raw.slice(pos);
  return { text: out + accent(rest), letters: count + letters(rest) };
}

interface Edit {
  start: number;
  end: number;
  render: () => string;
}

/** Splice edits into source[a, b): edits fully inside the range; inserts (start === end) strictly before b. */
function render(source: string, edits: Edit[], a: number, b: number): string {
  let out = '';
  let pos = a;
  for (const e of edits) {
    if (e.start < a || e.end > b || (e.start === e.end && e.start >= b) || e.start < pos) continue;
    out += source.slice(pos, e.start) + e.render();
    pos = e.end;
  }
  return out + source.slice(pos, b);
}

class TooLarge extends Error {}

function icuBody(
  source: string,
  ast: MessageFormatElement[],
  locale: string,
  glossary: GlossaryEntry[],
  accents: boolean,
  completePlurals: boolean,
): { body: string; letters: number } {
  const edits: Edit[] = [];
  let letterTotal = 0;
  // Copies of `other` nest: depth d with k missing categories grows like k^d. Stop past a budget.
  const budget = 16 * source.length + 4096;
  let produced = 0;
  const cardinal = pluralCategories(locale, 'cardinal') ?? ['other'];
  const ordinal = pluralCategories(locale, 'ordinal') ?? ['other'];
  // Categories the target does not use (a Russian `few` into English) are dropped with their keyword.
  if (completePlurals)
    for (const [start, end] of droppedPluralCases(source, ast, locale)) edits.push({ start, end, render: () => '' });
  walkIcu(ast, (el) => {
    if (el.type === TYPE.literal && el.location) {
      const { start, end } = el.location;
      const raw = source.slice(start.offset, end.offset);
      const done = transformText(raw, true, glossary, accents);
      letterTotal += done.letters;
      edits.push({ start: start.offset, end: end.offset, render: () => done.text });
    } else if (el.type === TYPE.plural) {
      const other = el.options.other?.location;
      if (!other || !completePlurals) return;
      const needed = el.pluralType === 'ordinal' ? ordinal : cardinal;
      const missing = needed.filter((c) => !(c in el.options));
      if (missing.length === 0) return;
      const at = other.end.offset;
      let memo: string | undefined;
      edits.push({
        start: at,
        end: at,
        render: () => {
          if (memo === undefined) {
            const body = render(source, edits, other.start.offset, other.end.offset);
            produced += (body.length + 8) * missing.length;
            if (produced > budget) throw new TooLarge();
            memo = missing.map((c) => ` ${c} ${body}`).join('');
          }
          return memo;
        },
      });
    }
  });
  edits.sort((x, y) => x.start - y.start || x.end - y.end);
  return { body: render(source, edits, 0, source.length), letters: letterTotal };
}

/**
 * Deterministic pseudo-localization: `Settings` → `[Ŝéţţîñĝš ~~]`. Letters are accented and the text is
 * padded by ~30% of its translatable letters inside brackets; ICU syntax and arguments, placeholders (`{name}`, `%s`, `%1$d`, `{{x}}`),
 * HTML/XML tags, entities, URLs and neverTranslate terms stay byte-identical; glossary terms with a target are
 * replaced by that target. ICU plurals get exactly the categories the target locale needs (copies of `other` added, unused ones dropped), unless
 * nesting would grow the output past ~16× the source (then the source's cases are kept).
 * A source marked ICU that does not parse is treated as plain text.
 *
 * @example pseudoLocalize('Hi <b>{name}</b>', { isIcu: true }) // '[Ĥî <b>{name}</b> ~]'
 */
export function pseudoLocalize(source: string, opts: PseudoOptions = {}): string {
  if (source.trim() === '') return source;
  const glossary = opts.glossary ?? [];
  const accents = opts.accents ?? true;
  let body: string;
  let letterCount: number;
  const parsed = opts.isIcu ? parseIcu(source) : undefined;
  if (parsed?.ok) {
    const locale = opts.targetLocale ?? 'en';
    try {
      ({ body, letters: letterCount } = icuBody(source, parsed.ast, locale, glossary, accents, true));
    } catch (e) {
      if (!(e instanceof TooLarge)) throw e;
      // Pathological nesting: keep the source's plural cases rather than grow without bound.
      ({ body, letters: letterCount } = icuBody(source, parsed.ast, locale, glossary, accents, false));
    }
  } else {
    ({ text: body, letters: letterCount } = transformText(source, false, glossary, accents));
  }
  const pad = Math.max(1, Math.round(letterCount * EXPANSION));
  return `[${body} ${'~'.repeat(pad)}]`;
}
