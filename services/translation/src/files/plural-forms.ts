// The forms a format writes for a plural group: the provider's ICU answer split by category, checked against the
// target's categories (missing or extra forms are issues), completed so the file is always complete and valid.
import type { ValidationIssue } from '../language/index.ts';
import { validatePluralForms } from '../validators/index.ts';
import { splitPluralIcu } from './icu-plural.ts';
import type { FileString } from './types.ts';

/**
 * Category → text for every category in `needed`. `translated` undefined (not translated) keeps the source forms; a
 * translation that is not one plural, or lacks a form, is reported and completed from its `other` form (else the
 * source's), so the written file still has exactly the target's forms.
 */
export function pluralFormsFor(
  s: FileString,
  translated: string | undefined,
  needed: readonly string[],
  targetLocale: string,
  issues: ValidationIssue[],
  source: Readonly<Record<string, string>>,
): Record<string, string> {
  const fallback = (c: string) => source[c] ?? source.other ?? Object.values(source)[0] ?? '';
  const out: Record<string, string> = {};
  if (translated === undefined) {
    for (const c of needed) out[c] = fallback(c);
    return out;
  }
  const forms = splitPluralIcu(translated);
  if (forms === null) {
    issues.push({ itemId: s.key, code: 'plural_form_missing', message: 'the translation is not one plural message' });
    for (const c of needed) out[c] = fallback(c);
    return out;
  }
  for (const issue of validatePluralForms(Object.keys(forms), targetLocale, needed))
    issues.push({ itemId: s.key, ...issue });
  for (const c of needed) out[c] = forms[c] ?? forms.other ?? fallback(c);
  return out;
}
