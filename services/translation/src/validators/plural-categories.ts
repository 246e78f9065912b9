/**
 * CLDR plural categories a locale needs, from the runtime's own data (`Intl.PluralRules`).
 * `undefined` when the locale tag is not valid.
 *
 * @example pluralCategories('ru', 'cardinal') // ['few', 'many', 'one', 'other']
 */
export function pluralCategories(locale: string, type: 'cardinal' | 'ordinal'): string[] | undefined {
  try {
    const cats = new Intl.PluralRules(locale, { type }).resolvedOptions().pluralCategories;
    return [...cats].sort();
  } catch {
    return undefined;
  }
}
