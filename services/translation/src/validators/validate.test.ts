import { describe, expect, it } from 'vitest';
import { isRetryable, validateBatch, validateTranslation } from './validate.ts';

const base = { sourceLocale: 'en', targetLocale: 'de', glossary: [] };

describe('validateTranslation', () => {
  it('accepts a good translation', () => {
    expect(
      validateTranslation({ ...base, source: 'Hi <b>{name}</b>', target: 'Hallo <b>{name}</b>', isIcu: true }),
    ).toEqual([]);
  });
  it('rejects an empty target for a non-empty source', () => {
    expect(validateTranslation({ ...base, source: 'Hi', target: '  ', isIcu: false }).map((i) => i.code)).toEqual([
      'empty_target',
    ]);
    expect(validateTranslation({ ...base, source: '', target: '', isIcu: false })).toEqual([]);
  });
  it('combines ICU, placeholder, tag and glossary checks', () => {
    const issues = validateTranslation({
      ...base,
      glossary: [{ term: 'Acme', target: null, neverTranslate: true }],
      source: 'Acme: {n, plural, one {# file} other {# files}} %s <b>x</b>',
      target: 'ACME: {n, plural, other {# Dateien}} <b>x</b>',
      isIcu: true,
    });
    expect(issues.map((i) => i.code)).toEqual([
      'icu_plural_category_missing',
      'placeholder_missing',
      'glossary_never_translate',
    ]);
  });
  it('checks tags in ICU strings with the tag validator', () => {
    const issues = validateTranslation({ ...base, source: '<b>x</b> {n}', target: '<b>x {n}', isIcu: true });
    expect(issues.map((i) => i.code)).toEqual(['tag_missing', 'tag_unbalanced']);
    const attrs = validateTranslation({
      ...base,
      source: '<a href="/x">Go</a> {n}',
      target: '<a href="/x">Los</a> {n}',
      isIcu: true,
    });
    expect(attrs).toEqual([]);
  });
  it('a plural case the target drops takes its tags, placeholders and terms with it; a kept one does not', () => {
    const source = '{n, plural, one {# <b>file</b> %s Acme} other {# files}}';
    const glossary = [{ term: 'Acme', target: null, neverTranslate: true }];
    // Japanese has only `other`: the `one` case and what is in it go.
    const ja = validateTranslation({
      ...base,
      targetLocale: 'ja',
      glossary,
      source,
      target: '{n, plural, other {#}}',
      isIcu: true,
    });
    expect(ja).toEqual([]);
    // German keeps `one`: leaving its contents out is still missing them (positive control).
    const de = validateTranslation({
      ...base,
      glossary,
      source,
      target: '{n, plural, one {#} other {#}}',
      isIcu: true,
    });
    expect(de.map((i) => i.code)).toEqual([
      'placeholder_missing',
      'tag_missing',
      'tag_missing',
      'glossary_never_translate',
    ]);
  });
  it('treats braces as placeholders in non-ICU strings', () => {
    expect(
      validateTranslation({ ...base, source: 'Hi {name}', target: 'Hallo {nom}', isIcu: false }).map((i) => i.code),
    ).toEqual(['placeholder_missing', 'placeholder_extra']);
  });
  it('copies itemId into every issue', () => {
    const issues = validateTranslation({ ...base, source: '%s', target: '', isIcu: false, itemId: 'k1' });
    expect(issues.every((i) => i.itemId === 'k1')).toBe(true);
  });
});

describe('validateBatch', () => {
  it('validates every item and tags issues with ids', () => {
    const issues = validateBatch(
      [
        { id: 'a', source: 'Hi {n}', target: 'Hallo {n}', isIcu: true },
        { id: 'b', source: 'Hi {n}', target: 'Hallo', isIcu: true },
        { id: 'c', source: '%d items', target: 'Elemente' },
      ],
      base,
    );
    expect(issues.map((i) => [i.itemId, i.code])).toEqual([
      ['b', 'icu_argument_missing'],
      ['c', 'placeholder_missing'],
    ]);
  });
});

describe('isRetryable', () => {
  it('tells request problems from translation problems', () => {
    const broken = validateTranslation({ ...base, source: 'Hi {name', target: 'Hallo {name}', isIcu: true });
    expect(broken.map((i) => [i.code, isRetryable(i)])).toEqual([['icu_syntax_source', false]]);
    const missing = validateTranslation({ ...base, source: 'Hi {name}', target: 'Hallo', isIcu: true });
    expect(missing.map((i) => [i.code, isRetryable(i)])).toEqual([['icu_argument_missing', true]]);
  });
});
