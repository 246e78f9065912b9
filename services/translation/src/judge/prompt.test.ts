import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../providers/upstream-error.ts';
import { buildJudgePrompt, parseJudgeReply } from './prompt.ts';

describe('buildJudgePrompt', () => {
  it('asks for MQM errors as JSON and sends the items as one JSON document', () => {
    const p = buildJudgePrompt({
      sourceLocale: 'en',
      targetLocale: 'de',
      model: 'm',
      glossary: [],
      style: { tone: 'formal' },
      items: [{ id: 'a', source: 'Save', target: 'Speichern' }],
    });
    expect(p.system).toContain('MQM');
    expect(p.system).toContain('"errors"');
    expect(JSON.parse(p.user)).toEqual({
      task: 'judge',
      sourceLocale: 'en',
      targetLocale: 'de',
      style: { tone: 'formal' },
      items: [{ id: 'a', source: 'Save', target: 'Speichern' }],
    });
  });
});

describe('parseJudgeReply', () => {
  const ids = ['a', 'b'];
  it('reads errors and normalizes categories and severities', () => {
    const reply = JSON.stringify({
      errors: [
        { id: 'a', category: 'Accuracy/Mistranslation', severity: 'Major', description: 'wrong verb' },
        { id: 'b', category: 'locale conventions', severity: 'minor', description: 'date format' },
        { id: 'z', category: 'fluency', severity: 'critical', description: 'x'.repeat(500) },
        { id: 'a', category: 'non-translation', severity: 'major' },
        { id: 'a', category: 'style', severity: 'neutral' },
        'junk',
      ],
    });
    const errors = parseJudgeReply(reply, ids);
    expect(errors).toEqual([
      { itemId: 'a', category: 'accuracy', severity: 'major', description: 'wrong verb' },
      { itemId: 'b', category: 'localeConventions', severity: 'minor', description: 'date format' },
      { category: 'fluency', severity: 'critical', description: 'x'.repeat(200) },
    ]);
  });
  it('accepts errors grouped by item', () => {
    const reply = '{"items": [{"id": "a", "errors": [{"category": "terminology", "severity": "minor"}]}]}';
    expect(parseJudgeReply(reply, ids)).toEqual([
      { itemId: 'a', category: 'terminology', severity: 'minor', description: '' },
    ]);
  });
  it('accepts an empty list and a fenced reply', () => {
    expect(parseJudgeReply('```json\n{"errors": []}\n```', ids)).toEqual([]);
  });
  it('throws UpstreamError for a reply without an errors list', () => {
    expect(() => parseJudgeReply('The translation is great!', ids)).toThrow(UpstreamError);
    expect(() => parseJudgeReply('{"score": 5}', ids)).toThrow(UpstreamError);
  });
  it('never throws anything but UpstreamError (fuzz)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 100 }), fc.json({ maxDepth: 4 })), (text) => {
        try {
          for (const err of parseJudgeReply(text, ids)) expect(['minor', 'major', 'critical']).toContain(err.severity);
        } catch (e) {
          expect(e).toBeInstanceOf(UpstreamError);
        }
      }),
      { numRuns: 400, seed: 11 },
    );
  });
});
