import { describe, expect, it } from 'vitest';
import { findTerm } from '../language/index.ts';
import { validateGlossary } from './glossary.ts';

describe('findTerm', () => {
  it('matches case-insensitively on word boundaries', () => {
    expect(findTerm('Open the Settings, then settings again', 'settings').map((f) => f.text)).toEqual([
      'Settings',
      'settings',
    ]);
    expect(findTerm('resettings', 'settings')).toEqual([]);
    expect(findTerm('The API key', 'API key')).toHaveLength(1);
  });
  it('escapes regex characters in terms', () => {
    expect(findTerm('Use C++ (v2)', 'C++ (v2)')).toHaveLength(1);
  });
  it('matches inside CJK text without word boundaries', () => {
    expect(findTerm('設定を開く', '設定')).toHaveLength(1);
  });
  it('ignores blank terms', () => {
    expect(findTerm('anything', '  ')).toEqual([]);
  });
});

describe('validateGlossary', () => {
  const glossary = [
    { term: 'Scriptorium', target: null, neverTranslate: true },
    { term: 'settings', target: 'Einstellungen', neverTranslate: false },
    { term: 'dashboard', target: null, neverTranslate: false },
  ];
  it('passes when the rules are followed', () => {
    expect(validateGlossary('Open Scriptorium settings', 'Scriptorium-Einstellungen öffnen', glossary)).toEqual([]);
  });
  it('requires neverTranslate terms verbatim, same case', () => {
    const issues = validateGlossary('Open Scriptorium', 'scriptorium öffnen', glossary);
    expect(issues.map((i) => i.code)).toEqual(['glossary_never_translate']);
    expect(issues[0]?.message).toContain('Scriptorium');
  });
  it('requires the target term, in any case, when the source has the term', () => {
    expect(validateGlossary('Settings', 'Optionen', glossary).map((i) => i.code)).toEqual(['glossary_target_missing']);
    expect(validateGlossary('Settings', 'EINSTELLUNGEN', glossary)).toEqual([]);
  });
  it('ignores terms the source does not contain, and entries without target', () => {
    expect(validateGlossary('Open the dashboard', 'Übersicht öffnen', glossary)).toEqual([]);
  });
});

describe('glossary terms outside the translatable text', () => {
  const glossary = [
    { term: 'API key', target: 'API-Schlüssel', neverTranslate: false },
    { term: 'count', target: 'Anzahl', neverTranslate: false },
  ];
  it('ignores terms inside tags, placeholders and URLs', () => {
    expect(
      validateGlossary('<a title="API key">Help</a> {{count}}', '<a title="API key">Hilfe</a> {{count}}', glossary),
    ).toEqual([]);
  });
  it('ignores ICU argument names, keywords and select keys, not ICU literal text', () => {
    const icu = { icu: true };
    expect(
      validateGlossary(
        '{count, plural, one {# file} other {# files}}',
        '{count, plural, other {# Dateien}}',
        glossary,
        icu,
      ),
    ).toEqual([]);
    const issues = validateGlossary('{n, plural, other {# count}}', '{n, plural, other {# Zahl}}', glossary, icu);
    expect(issues.map((i) => i.code)).toEqual(['glossary_target_missing']);
  });
  it('still sees terms in plain text next to tags', () => {
    expect(validateGlossary('<b>API key</b>', '<b>Schlüssel</b>', glossary).map((i) => i.code)).toEqual([
      'glossary_target_missing',
    ]);
  });
});
