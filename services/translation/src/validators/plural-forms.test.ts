import { describe, expect, it } from 'vitest';
import { validatePluralForms } from './plural-forms.ts';

const codes = (have: string[], locale: string, required?: string[]) =>
  validatePluralForms(have, locale, required).map((i) => i.code);

describe('validatePluralForms', () => {
  it('accepts exactly the categories of the target (CLDR via Intl.PluralRules)', () => {
    expect(codes(['one', 'few', 'many', 'other'], 'pl')).toEqual([]);
    expect(codes(['zero', 'one', 'two', 'few', 'many', 'other'], 'ar')).toEqual([]);
    expect(codes(['other'], 'ja')).toEqual([]);
    expect(codes(['one', 'other'], 'en')).toEqual([]);
  });

  it('reports a missing and an extra category, and both at once', () => {
    expect(codes(['one', 'other'], 'pl')).toEqual(['plural_form_missing']);
    expect(codes(['one', 'few', 'many', 'other'], 'en')).toEqual(['plural_form_extra']);
    expect(codes(['one', 'other'], 'ja')).toEqual(['plural_form_extra']);
    expect(codes(['one', 'two', 'other'], 'ru')).toEqual(['plural_form_missing', 'plural_form_extra']);
    expect(validatePluralForms(['one', 'other'], 'pl')[0]!.message).toBe('plural forms lack few, many needed by pl');
  });

  it('with `required` (PO: the categories integers reach) only those must be present; =N is never extra', () => {
    expect(codes(['one', 'few', 'many'], 'ru', ['one', 'few', 'many'])).toEqual([]);
    expect(codes(['one', 'few', 'many', 'other'], 'ru', ['one', 'few', 'many'])).toEqual([]);
    expect(codes(['=0', 'one', 'other'], 'en')).toEqual([]);
  });

  it('an invalid locale is a request issue', () => {
    expect(codes(['other'], 'not a locale')).toEqual(['locale_invalid']);
  });
});
