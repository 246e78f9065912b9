// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${x} is a placeholder under test, not a template
import { describe, expect, it } from 'vitest';
import { parseTag, scanProtected } from '../language/index.ts';
import { validatePlaceholders } from './placeholders.ts';

const codes = (s: string, t: string, icu = false) => validatePlaceholders(s, t, { icu }).map((i) => i.code);

describe('scanProtected', () => {
  it('finds every kind of placeholder, tag, entity and URL in order', () => {
    const text =
      'Hi %s, %1$d %.2f %@ {name} {0} {} {{ user }} ${x} <a href="x">&amp;</a> <br/> https://x.io/p a@b.io 100%%';
    expect(scanProtected(text, { icu: false }).map((t) => [t.kind, t.text])).toEqual([
      ['printf', '%s'],
      ['printf', '%1$d'],
      ['printf', '%.2f'],
      ['printf', '%@'],
      ['brace', '{name}'],
      ['brace', '{0}'],
      ['brace', '{}'],
      ['mustache', '{{ user }}'],
      ['dollar', '${x}'],
      ['tag', '<a href="x">'],
      ['entity', '&amp;'],
      ['tag', '</a>'],
      ['tag', '<br/>'],
      ['url', 'https://x.io/p'],
      ['url', 'a@b.io'],
      ['printf', '%%'],
    ]);
  });
  it('finds Python’s named placeholders (python-format) as printf', () => {
    expect(scanProtected('%(count)d of %(total)5.2f songs (%(name)s)', { icu: false }).map((t) => t.text)).toEqual([
      '%(count)d',
      '%(total)5.2f',
      '%(name)s',
    ]);
    expect(codes('%(count)d songs', '%(anzahl)d Lieder')).toEqual(['placeholder_missing', 'placeholder_extra']);
    expect(codes('%(count)d songs', '%(count)d Lieder')).toEqual([]); // positive control
  });
  it('does not take text for tags or printf', () => {
    expect(scanProtected('a < b and c > d, 50% off, 100 % sure', { icu: false })).toEqual([]);
  });
  it('leaves braces to the ICU validator for ICU strings', () => {
    expect(scanProtected('{n} %s <b>x</b>', { icu: true }).map((t) => t.text)).toEqual(['%s', '<b>', '</b>']);
  });
});

describe('parseTag', () => {
  it('knows open, close, self-closing and void tags', () => {
    expect(parseTag('<B class="x">')).toEqual({ name: 'b', kind: 'open' });
    expect(parseTag('</b>')).toEqual({ name: 'b', kind: 'close' });
    expect(parseTag('<x/>')).toEqual({ name: 'x', kind: 'self' });
    expect(parseTag('<br>')).toEqual({ name: 'br', kind: 'self' });
  });
});

describe('validatePlaceholders', () => {
  it('accepts the same placeholders in another order', () => {
    expect(codes('%1$s sent %2$d files to {name}', '{name} hat %2$d Dateien von %1$s')).toEqual([]);
  });
  it('reports missing and extra placeholders', () => {
    expect(codes('Hello %s', 'Hallo')).toEqual(['placeholder_missing']);
    expect(codes('Hello', 'Hallo %s')).toEqual(['placeholder_extra']);
    expect(codes('{{count}} items', '{{anzahl}} Elemente')).toEqual(['placeholder_missing', 'placeholder_extra']);
  });
  it('compares counts, not just presence', () => {
    const issues = validatePlaceholders('%s and %s', 'und %s', { icu: false });
    expect(issues.map((i) => i.code)).toEqual(['placeholder_missing']);
    expect(validatePlaceholders('%s', '%s %s %s', { icu: false })[0]?.message).toContain('2 times');
  });
  it('ignores whitespace inside mustache placeholders and literal percent', () => {
    expect(codes('{{ user }} 100%%', '{{user}} 100 %%')).toEqual([]);
  });
  it('accepts translated tag attributes but not changed tags', () => {
    expect(codes('<a title="Help">Help</a>', '<a title="Hilfe">Hilfe</a>')).toEqual([]);
    expect(codes('<b>Hi</b>', '<strong>Hi</strong>')).toEqual(['tag_missing', 'tag_missing', 'tag_extra', 'tag_extra']);
  });
  it('reports tags that do not nest in the target', () => {
    expect(codes('<b><i>x</i></b>', '<b><i>x</b></i>')).toEqual(['tag_unbalanced']);
    expect(codes('<b>x</b><i>y</i>', '<b>x<i>y</i>')).toEqual(['tag_missing', 'tag_unbalanced']);
  });
  it('does not require balance when the source is itself a fragment', () => {
    expect(codes('<b>start', '<b>Anfang')).toEqual([]);
  });
  it('treats void elements as self-closing', () => {
    expect(codes('a<br>b', 'a<br>b')).toEqual([]);
    expect(codes('a<br/>b', 'ab')).toEqual(['tag_missing']);
  });
  it('compares presence, not counts, in ICU strings (plural cases repeat tokens)', () => {
    const src = '{n, plural, one {<b>#</b> %s} other {<b>#</b> %s}}';
    const ru = '{n, plural, one {<b>#</b> %s} few {<b>#</b> %s} many {<b>#</b> %s} other {<b>#</b> %s}}';
    expect(codes(src, ru, true)).toEqual([]);
    expect(codes(src, '{n, plural, one {#} other {<b>#</b>}}', true)).toEqual(['placeholder_missing']);
  });
  it('checks printf and tags, not braces, in ICU strings', () => {
    expect(codes('{n} %s <b>x</b>', '{n} <b>x</b>', true)).toEqual(['placeholder_missing']);
    expect(codes('{n}', '{m}', true)).toEqual([]);
  });
});
