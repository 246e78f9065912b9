import { describe, expect, it } from 'vitest';
import { type CompletionPrompt, llmEstimates, type TranslationProvider } from '../providers/index.ts';
import { judgeTranslations } from './judge.ts';

/** A model that always answers the same text (an in-process stand-in; the HTTP path is tested against the fakes). */
function scripted(reply: string, seen: CompletionPrompt[] = []): TranslationProvider {
  return {
    name: 'openai',
    ...llmEstimates(),
    translate: () => Promise.reject(new Error('not used')),
    complete: async (prompt) => {
      seen.push(prompt);
      return { text: reply, model: 'judge-model-2', tokensIn: 100, tokensOut: 20 };
    },
  };
}

const input = {
  sourceLocale: 'en',
  targetLocale: 'de',
  model: 'judge-model',
  glossary: [],
  items: [
    { id: 'a', source: 'Save %s', target: 'Speichern' },
    { id: 'b', source: 'Open', target: 'Öffnen' },
  ],
};

describe('judgeTranslations with an LLM', () => {
  it('scores from the annotated errors and reports usage and model', async () => {
    const seen: CompletionPrompt[] = [];
    const reply =
      '{"errors": [{"id": "b", "category": "style", "severity": "minor", "description": "stiff"}, {"id": "a", "category": "accuracy", "severity": "major", "description": "lost %s"}]}';
    const r = await judgeTranslations(scripted(reply, seen), input);
    expect(seen[0]).toMatchObject({ model: 'judge-model', json: true, maxTokens: 64 + 160 * 2 });
    expect(r).toMatchObject({ judge: 'llm', model: 'judge-model-2', tokensIn: 100, tokensOut: 20 });
    expect(r.scores).toEqual({ accuracy: 2.5, fluency: 5, terminology: 5, style: 4.5, localeConventions: 5 });
    expect(r.errors).toHaveLength(2); // the validator's placeholder issue is the model's accuracy error already
    expect(r.issues.map((i) => [i.itemId, i.code])).toEqual([['a', 'placeholder_missing']]);
  });
  it('adds validator findings the model missed', async () => {
    const r = await judgeTranslations(scripted('{"errors": []}'), input);
    expect(r.errors).toEqual([
      { itemId: 'a', category: 'accuracy', severity: 'major', description: 'placeholder %s missing' },
    ]);
    expect(r.scores.accuracy).toBe(2.5);
  });
  it('makes no call for an empty batch', async () => {
    const seen: CompletionPrompt[] = [];
    const r = await judgeTranslations(scripted('{}', seen), { ...input, items: [] });
    expect(seen).toHaveLength(0);
    expect(r.overall).toBe(5);
  });
});
