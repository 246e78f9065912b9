import { describe, expect, it } from 'vitest';
import { createProvider } from '../providers/create-provider.ts';
import { heuristicJudge } from './heuristic.ts';
import { judgeTranslations } from './judge.ts';
import type { JudgeInput } from './types.ts';

const base: Omit<JudgeInput, 'items'> = {
  sourceLocale: 'en',
  targetLocale: 'ru',
  model: 'any',
  glossary: [{ term: 'Acme', target: null, neverTranslate: true }],
};

describe('heuristicJudge', () => {
  it('scores clean translations 5 and says it is heuristic', () => {
    const r = heuristicJudge({ ...base, items: [{ id: 'a', source: 'Open Acme', target: 'Открыть Acme' }] });
    expect(r).toMatchObject({
      overall: 5,
      judge: 'heuristic',
      model: 'heuristic-validators',
      tokensIn: 0,
      tokensOut: 0,
    });
    expect(r.errors).toEqual([]);
  });
  it('maps validator issues to MQM errors per dimension', () => {
    const r = heuristicJudge({
      ...base,
      items: [
        { id: 'a', source: 'Open Acme', target: 'Открыть ACME' },
        {
          id: 'b',
          source: '{n, plural, one {# file} other {# files}}',
          target: '{n, plural, one {# файл} other {# файлов}}',
          isIcu: true,
        },
        { id: 'c', source: 'Hello %s', target: 'Привет' },
        { id: 'd', source: '<b>Bold</b>', target: '<b>Жирный' },
      ],
    });
    expect(r.errors.map((e) => [e.itemId, e.category, e.severity])).toEqual([
      ['a', 'terminology', 'major'],
      ['b', 'localeConventions', 'major'],
      ['c', 'accuracy', 'major'],
      ['d', 'fluency', 'major'],
      ['d', 'fluency', 'major'],
    ]);
    expect(r.scores).toEqual({ accuracy: 3.8, fluency: 2.5, terminology: 3.8, style: 5, localeConventions: 3.8 });
    expect(r.issues).toHaveLength(5);
  });
  it('flags untranslated and implausibly long targets', () => {
    const r = heuristicJudge({
      ...base,
      items: [
        { id: 'a', source: 'Open the file', target: 'Open the file' },
        { id: 'b', source: 'A reasonably long sentence here', target: 'x'.repeat(200) },
        { id: 'c', source: 'Acme', target: 'Acme' },
      ],
    });
    expect(r.errors.map((e) => [e.itemId, e.category, e.severity])).toEqual([
      ['a', 'accuracy', 'major'],
      ['b', 'fluency', 'minor'],
    ]);
  });
  it('is what judgeTranslations uses for the pseudo provider', async () => {
    const p = createProvider({ kind: 'pseudo', timeoutMs: 1000 });
    const r = await judgeTranslations(p, { ...base, items: [{ id: 'a', source: 'Hi', target: '' }] });
    expect(r.judge).toBe('heuristic');
    expect(r.scores.accuracy).toBe(0);
  });
});
