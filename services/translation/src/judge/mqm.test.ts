import { describe, expect, it } from 'vitest';
import { scoresFromErrors } from './mqm.ts';
import type { MqmError } from './types.ts';

const e = (category: MqmError['category'], severity: MqmError['severity']): MqmError => ({
  category,
  severity,
  description: '',
});

describe('scoresFromErrors', () => {
  it('gives 5 everywhere without errors', () => {
    expect(scoresFromErrors([], 3)).toEqual({
      scores: { accuracy: 5, fluency: 5, terminology: 5, style: 5, localeConventions: 5 },
      overall: 5,
    });
  });
  it('subtracts weighted penalties per item: minor 1, major 5, critical 25', () => {
    const { scores } = scoresFromErrors([e('fluency', 'minor')], 2);
    expect(scores.fluency).toBe(4.5);
    expect(scoresFromErrors([e('accuracy', 'major')], 5).scores.accuracy).toBe(4);
    expect(scoresFromErrors([e('accuracy', 'major')], 1).scores.accuracy).toBe(0);
    expect(scoresFromErrors([e('terminology', 'critical')], 10).scores.terminology).toBe(2.5);
  });
  it('clamps at 0 and keeps dimensions apart', () => {
    const r = scoresFromErrors([e('style', 'critical'), e('style', 'critical'), e('localeConventions', 'minor')], 1);
    expect(r.scores).toEqual({ accuracy: 5, fluency: 5, terminology: 5, style: 0, localeConventions: 4 });
    expect(r.overall).toBe(3.8);
  });
  it('treats zero items like one', () => {
    expect(scoresFromErrors([e('fluency', 'minor')], 0).scores.fluency).toBe(4);
  });
});
