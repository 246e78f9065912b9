import { describe, expect, it } from 'vitest';
import type { JudgeResult } from '../judge/index.ts';
import { flaggedItems } from './judging.ts';
import type { JudgeSamplePayload } from './translate.ts';

const result: JudgeResult = {
  scores: { accuracy: 2, fluency: 4, terminology: 3, style: 5, localeConventions: 5 },
  overall: 3.8,
  judge: 'heuristic',
  model: 'heuristic-validators',
  tokensIn: 0,
  tokensOut: 0,
  issues: [],
  errors: [],
};

const sample: JudgeSamplePayload = {
  orgId: 'org-1',
  sourceLocale: 'en',
  targetLocale: 'de',
  model: 'model-cheap',
  threshold: 4,
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
  style: { notes: 'Walrus style notes' },
  items: [
    { id: 'greeting', source: 'Hello {name}!', target: 'Hallo!', isIcu: true },
    {
      id: 'settings',
      source: 'Open <b>Settings</b> in Scriptorium',
      target: 'Öffne Einstellungen in scriptorium',
      isIcu: false,
    },
    { id: 'clean', source: 'Save', target: 'Speichern', isIcu: false },
  ],
};

describe('flaggedItems', () => {
  const rows = flaggedItems(sample, result);

  it('one open review item per sampled item, with the judge’s scores', () => {
    expect(rows.map((r) => r.itemId)).toEqual(['greeting', 'settings', 'clean']);
    expect(rows[0]).toMatchObject({
      orgId: 'org-1',
      sourceText: 'Hello {name}!',
      targetText: 'Hallo!',
      isIcu: true,
      model: 'model-cheap',
      overall: 3.8,
      scores: { accuracy: 2, judge: 'heuristic' },
    });
  });

  it('keeps each item’s own validator issues (code and message, no item id); an item that passes has none', () => {
    expect(rows[0]!.issues).toEqual([{ code: 'icu_argument_missing', message: 'argument {name} missing' }]);
    expect(rows[1]!.issues!.map((i) => i.code).sort()).toEqual([
      'glossary_never_translate',
      'tag_missing',
      'tag_missing',
    ]);
    expect(rows[2]!.issues).toEqual([]);
  });

  it('an issue names only pieces of its own item’s texts and glossary, never another item’s or the style notes', () => {
    for (const [i, row] of rows.entries()) {
      const own = `${row.sourceText}\n${row.targetText}\n${JSON.stringify(row.glossary)}`;
      const others = sample.items.filter((_, j) => j !== i).flatMap((it) => [it.source, it.target]);
      for (const issue of row.issues!) {
        expect(Object.keys(issue).sort()).toEqual(['code', 'message']);
        // What a message quotes ({argument}, <tag>, "term") comes from this item.
        for (const quoted of issue.message.match(/\{[^}]*\}|<[^>]*>|"[^"]*"/g) ?? []) {
          expect(own, `${row.itemId}: ${issue.message}`).toContain(quoted.replace(/^"|"$/g, ''));
        }
        for (const text of [...others, 'Walrus']) expect(issue.message).not.toContain(text);
      }
    }
  });
});
