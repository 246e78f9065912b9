const cache = new Map<string, string[] | undefined>();

/**
 * CLDR plural categories a locale needs, from the runtime's own data (`Intl.PluralRules`), sorted.
 * `undefined` when the locale tag is not valid. Memoized (building a PluralRules is costly).
 *
 * @example pluralCategories('ru', 'cardinal') // ['few', 'many', 'one', 'other']
 */
export function pluralCategories(locale: string, type: 'cardinal' | 'ordinal'): string[] | undefined {
  const key = `${type}:${locale}`;
  if (cache.has(key)) return cache.get(key)?.slice();
  let cats: string[] | undefined;
  try {
    cats = [...new Intl.PluralRules(locale, { type }).resolvedOptions().pluralCategories].sort();
  } catch {
    cats = undefined;
  }
  if (cache.size > 500) cache.clear();
  cache.set(key, cats);
  return cats?.slice();
}
