import { pluralCategories, type ValidationIssue } from '../language/index.ts';

/**
 * A format's own plural forms (PO msgstr[n] mapped to categories, Android `<item quantity>`, ICU cases) against the
 * CLDR categories of the target locale (`Intl.PluralRules`): `plural_form_missing` for a category the locale needs
 * that `have` lacks, `plural_form_extra` for one the locale does not use. `required` narrows what must be present
 * (PO: only the categories integers reach, since gettext's n is an integer).
 *
 * @example validatePluralForms(['one', 'other'], 'pl') // [{ code: 'plural_form_missing', message: '… few, many …' }]
 */
export function validatePluralForms(
  have: readonly string[],
  targetLocale: string,
  required?: readonly string[],
): ValidationIssue[] {
  const cldr = pluralCategories(targetLocale, 'cardinal');
  if (cldr === undefined) return [{ code: 'locale_invalid', message: 'target locale is not a valid locale tag' }];
  const needed = required ?? cldr;
  const present = new Set(have);
  const issues: ValidationIssue[] = [];
  const missing = needed.filter((c) => !present.has(c));
  if (missing.length > 0) {
    issues.push({
      code: 'plural_form_missing',
      message: `plural forms lack ${missing.join(', ')} needed by ${targetLocale}`,
    });
  }
  const extra = [...present].filter((c) => !c.startsWith('=') && !cldr.includes(c));
  if (extra.length > 0) {
    issues.push({
      code: 'plural_form_extra',
      message: `plural forms ${extra.join(', ')} are not used by ${targetLocale}`,
    });
  }
  return issues;
}
