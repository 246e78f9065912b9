import { describe, expect, it } from 'vitest';
import { highlightIcu } from './icu-highlight.ts';

const show = (message: string) => highlightIcu(message).map((s) => `${s.kind[0]}:${s.text}`);

describe('highlightIcu', () => {
  it('plain text is one segment', () => {
    expect(show('Save your changes')).toEqual(['t:Save your changes']);
    expect(highlightIcu('')).toEqual([]);
  });

  it('simple and typed arguments', () => {
    expect(show('Hello {name}, {n, number} items on {d, date, short}')).toEqual([
      't:Hello ',
      'a:{name}',
      't:, ',
      'a:{n, number}',
      't: items on ',
      'a:{d, date, short}',
    ]);
  });

  it('plural: head, case keys and braces, # and nested arguments', () => {
    expect(show('{count, plural, =0 {none} one {# file in {dir}} other {# files}}!')).toEqual([
      'a:{count, plural,',
      's: =0 {',
      't:none',
      's:} one {',
      'a:#',
      't: file in ',
      'a:{dir}',
      's:} other {',
      'a:#',
      't: files',
      's:}}',
      't:!',
    ]);
  });

  it('select, with # left as text outside a plural', () => {
    expect(show('{g, select, female {She has #1} other {They}}')).toEqual([
      'a:{g, select,',
      's: female {',
      't:She has #1',
      's:} other {',
      't:They',
      's:}}',
    ]);
  });

  it('apostrophe quoting makes braces literal', () => {
    expect(show("It''s '{literal}' and {x}")).toEqual(["t:It''s '{literal}' and ", 'a:{x}']);
  });

  it('unbalanced or broken input stays text and never throws', () => {
    for (const broken of ['{', '}', '{name', '{count, plural, one {#', "'{unterminated", '{{}}', '{a, plural, }']) {
      const segments = highlightIcu(broken);
      expect(segments.map((s) => s.text).join('')).toBe(broken);
    }
  });

  it('keeps every character, in order', () => {
    const message = '{n, plural, one {# Nachricht von {sender}} other {# Nachrichten}} — <b>{folder}</b>';
    expect(
      highlightIcu(message)
        .map((s) => s.text)
        .join(''),
    ).toBe(message);
  });
});
