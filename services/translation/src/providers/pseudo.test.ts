import { describe, expect, it } from 'vitest';
import { pseudoTranslate } from './pseudo.ts';
import type { ProviderRequest } from './types.ts';

describe('pseudoTranslate', () => {
  const make = (): ProviderRequest => ({
    sourceLocale: 'en',
    targetLocale: 'de',
    model: 'pseudo',
    style: {},
    glossary: [],
    items: [{ id: 'a', text: 'Save' }],
  });
  it('answers the same request object again without being fooled by a change in between', () => {
    const req = make();
    const first = pseudoTranslate(req);
    expect(pseudoTranslate(req)).toEqual(first);
    req.items[0]!.text = 'Open';
    expect(pseudoTranslate(req).translations).toEqual([{ id: 'a', text: '[Öþéñ ~]' }]);
  });
  it('hands out copies, so a caller cannot corrupt the next answer', () => {
    const req = make();
    pseudoTranslate(req).translations[0]!.text = 'tampered';
    expect(pseudoTranslate(req).translations[0]!.text).toBe('[Ŝåṽé ~]');
  });
});
