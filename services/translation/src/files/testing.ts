// Test support for the format tests (imported by *.test.ts only): the fixtures, a translation of a file's strings
// through the pseudo provider's transform, the placeholders of a text, and the fuzzers' mutations of a file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { scanProtected } from '../language/index.ts';
import { pseudoLocalize } from '../providers/pseudo-transform.ts';
import type { ParsedFile } from './types.ts';

export const fixture = (name: string): string => readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8');

/** Every string of `file` pseudo-translated for `targetLocale`, as the provider would answer. */
export function pseudoTranslations(file: ParsedFile, targetLocale: string): Map<string, string> {
  return new Map(file.strings.map((s) => [s.key, pseudoLocalize(s.text, { isIcu: s.isIcu, targetLocale })]));
}

/** The placeholders and tags of a text, sorted (printf, mustache, tags; braces too unless `icu`). */
export const placeholders = (text: string, icu = false): string[] =>
  scanProtected(text, { icu })
    .filter((t) => t.kind !== 'entity' && t.kind !== 'url')
    .map((t) => t.text)
    .sort();

/** Plural categories of Intl for `locale`, in CLDR order. */
export const cldrCategories = (locale: string): string[] => {
  const cats = new Intl.PluralRules(locale).resolvedOptions().pluralCategories;
  return ['zero', 'one', 'two', 'few', 'many', 'other'].filter((c) => (cats as string[]).includes(c));
};
/** A file cut short, with a span deleted, or with markup and escape characters inserted. */
export const mutation = (source: string) =>
  fc.oneof(
    fc.nat(source.length).map((n) => source.slice(0, n)),
    fc.tuple(fc.nat(source.length), fc.nat(40)).map(([at, n]) => source.slice(0, at) + source.slice(at + n)),
    fc
      .tuple(
        fc.nat(source.length),
        fc.string({
          unit: fc.constantFrom('<', '>', '"', "'", '{', '}', '\\', '&', '#', '\n', ' ', 'a', '%', '/', ']', ';', 'é'),
          maxLength: 8,
        }),
      )
      .map(([at, s]) => source.slice(0, at) + s + source.slice(at)),
  );
