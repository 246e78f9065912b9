// Glossary terms in text: where a term occurs, and the human-readable part of a string where terms count.
import { TYPE } from '@formatjs/icu-messageformat-parser';
import { type ParseOutcome, parseIcu, walkIcu } from './icu.ts';
import { type ProtectedToken, scanProtected } from './patterns.ts';

const BOUNDED_SCRIPT =
  /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Georgian}\p{N}]/u;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const termCache = new Map<string, RegExp>();

/**
 * Regex finding `term` in text: case-insensitive, and on word boundaries for scripts that separate words
 * with spaces (Latin, Cyrillic, Greek…). In scripts without spaces (CJK, Thai) a substring match is used.
 */
export function termPattern(term: string): RegExp {
  const cached = termCache.get(term);
  if (cached) return cached;
  const first = term[0] ?? '';
  const last = term.at(-1) ?? '';
  const before = BOUNDED_SCRIPT.test(first) ? String.raw`(?<![\p{L}\p{N}_])` : '';
  const after = BOUNDED_SCRIPT.test(last) ? String.raw`(?![\p{L}\p{N}_])` : '';
  const re = new RegExp(`${before}${escapeRegExp(term)}${after}`, 'giu');
  if (termCache.size > 1000) termCache.clear();
  termCache.set(term, re);
  return re;
}

/** Occurrences of a glossary term in `text` (start, end, matched text). */
export function findTerm(text: string, term: string): { start: number; end: number; text: string }[] {
  if (term.trim().length === 0) return [];
  const re = termPattern(term);
  re.lastIndex = 0;
  return [...text.matchAll(re)].map((m) => ({ start: m.index, end: m.index + m[0].length, text: m[0] }));
}

function blankProtected(text: string, icu: boolean, tokens?: ProtectedToken[]): string {
  let out = '';
  let pos = 0;
  for (const t of tokens ?? scanProtected(text, { icu })) {
    out += `${text.slice(pos, t.start)} `;
    pos = t.end;
  }
  return out + text.slice(pos);
}

/**
 * The human-readable text of a string, where glossary terms count: protected tokens (tags and their attributes,
 * placeholders, URLs) are blanked, and for ICU only the literal text of the message is kept (not argument names,
 * keywords or select keys). An ICU string that does not parse is treated as plain text.
 */
export function translatableText(
  text: string,
  icu: boolean,
  alreadyParsed?: ParseOutcome,
  /** `scanProtected(text, { icu: false })`, when the caller has it (plain strings only). */
  plainTokens?: ProtectedToken[],
): string {
  if (icu) {
    const parsed = alreadyParsed ?? parseIcu(text);
    if (parsed.ok) {
      const parts: string[] = [];
      walkIcu(parsed.ast, (el) => {
        if (el.type === TYPE.literal) parts.push(el.value);
      });
      return blankProtected(parts.join(' '), true);
    }
  }
  return blankProtected(text, false, plainTokens);
}
