import { describe, expect, it } from 'vitest';
import { pluralCategories } from '../language/index.ts';
import { validateIcu } from './icu.ts';

const codes = (source: string, target: string, locale = 'de') => validateIcu(source, target, locale).map((i) => i.code);

describe('pluralCategories', () => {
  it('reads CLDR categories from Intl for each locale', () => {
    expect(pluralCategories('en', 'cardinal')).toEqual(['one', 'other']);
    expect(pluralCategories('ru', 'cardinal')).toEqual(['few', 'many', 'one', 'other']);
    expect(pluralCategories('pl', 'cardinal')).toEqual(['few', 'many', 'one', 'other']);
    expect(pluralCategories('ar', 'cardinal')).toEqual(['few', 'many', 'one', 'other', 'two', 'zero']);
    expect(pluralCategories('ja', 'cardinal')).toEqual(['other']);
    expect(pluralCategories('en', 'ordinal')).toEqual(['few', 'one', 'other', 'two']);
  });
  it('answers undefined for an invalid locale tag', () => {
    expect(pluralCategories('not a locale!', 'cardinal')).toBeUndefined();
  });
});

describe('validateIcu: syntax', () => {
  it('accepts a correct translation', () => {
    expect(codes('Hello {name}!', 'Hallo {name}!')).toEqual([]);
  });
  it('reports a broken target', () => {
    expect(codes('Hello {name}', 'Hallo {name')).toEqual(['icu_syntax_target']);
    expect(codes('{n, plural, one {x} other {y}}', '{n, plural, one {x} other {y}')).toEqual(['icu_syntax_target']);
    expect(codes('{a, number}', '{a, nombre}')).toEqual(['icu_syntax_target']);
  });
  it('reports a broken source, and nothing else', () => {
    expect(codes('Hello {name', 'Hallo {name}')).toEqual(['icu_syntax_source']);
  });
  it('reports a plural or select without other', () => {
    expect(codes('{n, plural, one {x} other {y}}', '{n, plural, one {x}}')).toEqual(['icu_other_missing']);
    expect(codes('{g, select, a {x} other {y}}', '{g, select, a {x}}')).toEqual(['icu_other_missing']);
  });
  it('leaves tags to the tag validator, so HTML attributes are fine in ICU strings', () => {
    expect(codes('<a href="/help">Help</a> for {name}', '<a href="/help">Hilfe</a> für {name}')).toEqual([]);
    expect(codes('<b>bold</b> {x}', '<b>fett</i> {x}')).toEqual([]);
  });
  it('treats quoted braces as text', () => {
    expect(codes("'{'literal'}' {a}", "'{'wörtlich'}' {a}")).toEqual([]);
    expect(codes("'{'literal'}' {a}", '{literal} {a}')).toEqual(['icu_argument_extra']);
  });
  it('reports the offset of the syntax error, not the text', () => {
    const [issue] = validateIcu('{a}', 'secret customer text {a', 'de');
    expect(issue?.message).toContain('offset');
    expect(issue?.message).not.toContain('secret customer text');
  });
});

describe('validateIcu: arguments', () => {
  it('reports missing and extra arguments by name', () => {
    const issues = validateIcu('Hi {first} {last}', 'Hallo {first} {lastName}', 'de');
    expect(issues.map((i) => i.code)).toEqual(['icu_argument_missing', 'icu_argument_extra']);
    expect(issues[0]?.message).toContain('{last}');
    expect(issues[1]?.message).toContain('{lastName}');
  });
  it('allows reordering', () => {
    expect(codes('{a} then {b}', '{b} dann {a}')).toEqual([]);
  });
  it('reports a changed argument type', () => {
    expect(codes('{n, number}', '{n}')).toEqual(['icu_argument_type']);
    expect(codes('{d, date, short}', '{d, time, short}')).toEqual(['icu_argument_type']);
    expect(codes('{n, plural, other {#}}', '{n, selectordinal, other {#}}')).toEqual(['icu_argument_type']);
    expect(codes('{n, plural, one {#} other {#}}', '{n, number}')).toEqual(['icu_argument_type']);
  });
  it('accepts number skeletons and date styles that differ only in style', () => {
    expect(codes('{p, number, ::currency/EUR}', '{p, number, ::currency/EUR .00}')).toEqual([]);
    expect(codes('{d, date, short}', '{d, date, long}')).toEqual([]);
  });
  it('finds arguments nested in plural, select and tags', () => {
    const src =
      '{g, select, female {{n, plural, one {She has <b>{count}</b> file} other {She has # files}}} other {{name}}}';
    const tgt =
      '{g, select, female {{n, plural, one {Sie hat <b>{count}</b> Datei} other {Sie hat # Dateien}}} other {{name}}}';
    expect(codes(src, tgt)).toEqual([]);
    const lost = tgt.replace('{count}', 'eine');
    expect(codes(src, lost)).toEqual(['icu_argument_missing']);
  });
});

describe('validateIcu: plural categories of the target locale', () => {
  const en = 'You have {n, plural, one {# message} other {# messages}}';
  it('ru needs one, few, many, other', () => {
    expect(codes(en, '{n, plural, one {# сообщение} other {# сообщений}}', 'ru')).toEqual([
      'icu_plural_category_missing',
    ]);
    const full = '{n, plural, one {# сообщение} few {# сообщения} many {# сообщений} other {# сообщения}}';
    expect(codes(en, full, 'ru')).toEqual([]);
    const [issue] = validateIcu(en, '{n, plural, one {#} other {#}}', 'ru');
    expect(issue?.message).toContain('few, many');
  });
  it('pl needs one, few, many, other', () => {
    expect(codes(en, '{n, plural, one {# wiadomość} few {# wiadomości} other {# wiadomości}}', 'pl')).toEqual([
      'icu_plural_category_missing',
    ]);
    expect(
      codes(en, '{n, plural, one {# wiadomość} few {# wiadomości} many {# wiadomości} other {# wiadomości}}', 'pl'),
    ).toEqual([]);
  });
  it('ar needs zero, one, two, few, many, other', () => {
    const five = '{n, plural, zero {لا رسائل} one {رسالة} two {رسالتان} few {# رسائل} other {# رسالة}}';
    expect(codes(en, five, 'ar')).toEqual(['icu_plural_category_missing']);
    const six = '{n, plural, zero {لا رسائل} one {رسالة} two {رسالتان} few {# رسائل} many {# رسالة} other {# رسالة}}';
    expect(codes(en, six, 'ar')).toEqual([]);
  });
  it('ja needs only other, and a kept "one" is an extra category', () => {
    expect(codes(en, '{n, plural, other {#件のメッセージ}}', 'ja')).toEqual([]);
    expect(codes(en, '{n, plural, one {#件} other {#件のメッセージ}}', 'ja')).toEqual(['icu_plural_category_extra']);
  });
  it('exact matches do not replace a category', () => {
    expect(codes(en, '{n, plural, =1 {eine Nachricht} other {# Nachrichten}}', 'de')).toEqual([
      'icu_plural_category_missing',
    ]);
    expect(codes(en, '{n, plural, =0 {keine} one {eine} other {#}}', 'de')).toEqual([]);
  });
  it('checks selectordinal against ordinal categories', () => {
    const src = '{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}';
    expect(codes(src, '{n, selectordinal, other {#.}}', 'de')).toEqual([]);
    expect(codes(src, '{n, selectordinal, one {#st} other {#th}}', 'en')).toEqual(['icu_plural_category_missing']);
  });
  it('checks every nested plural', () => {
    const src = '{a, plural, one {{b, plural, one {x} other {y}}} other {z}}';
    const tgt = '{a, plural, one {{b, plural, one {x} few {x} many {x} other {y}}} few {z} many {z} other {z}}';
    expect(codes(src, tgt, 'ru')).toEqual([]);
    const inner = '{a, plural, one {{b, plural, one {x} other {y}}} few {z} many {z} other {z}}';
    expect(codes(src, inner, 'ru')).toEqual(['icu_plural_category_missing']);
  });
  it('reports an invalid target locale once and skips plural checks', () => {
    expect(codes(en, '{n, plural, other {#}}', '???')).toEqual(['locale_invalid']);
  });
});

describe('validateIcu: select', () => {
  const src = '{g, select, male {He} female {She} other {They}} replied';
  it('needs every case the source has', () => {
    expect(codes(src, '{g, select, male {Er} female {Sie} other {Sie}} antwortete')).toEqual([]);
    const issues = validateIcu(src, '{g, select, male {Er} other {Sie}} antwortete', 'de');
    expect(issues.map((i) => i.code)).toEqual(['icu_select_case_missing']);
    expect(issues[0]?.message).toContain('female');
  });
  it('allows extra cases in the target', () => {
    expect(codes(src, '{g, select, male {Er} female {Sie} neuter {Es} other {Sie}} antwortete')).toEqual([]);
  });
});
