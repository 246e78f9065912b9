import type { JudgeScores, MqmCategory, MqmError, MqmSeverity } from './types.ts';

/** GEMBA-MQM / MQM severity weights: a minor error costs 1 point, a major 5, a critical 25. */
export const MQM_WEIGHTS: Record<MqmSeverity, number> = { minor: 1, major: 5, critical: 25 };

export const MQM_CATEGORIES: readonly MqmCategory[] = [
  'accuracy',
  'fluency',
  'terminology',
  'style',
  'localeConventions',
];

const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * From MQM errors to 0–5 per dimension: for each dimension, penalty = Σ weight(severity) of its errors divided by
 * the number of items judged, and score = clamp(5 − penalty, 0, 5), one decimal. So one minor error per item
 * gives 4, one major error in a fifth of the items gives 4, a critical error anywhere in a batch of 5 gives 0.
 * `overall` is the mean of the five scores.
 *
 * @example scoresFromErrors([{ category: 'fluency', severity: 'minor', description: '' }], 2).fluency // 4.5
 */
export function scoresFromErrors(errors: MqmError[], itemCount: number): { scores: JudgeScores; overall: number } {
  const n = Math.max(1, itemCount);
  const penalty: Record<MqmCategory, number> = {
    accuracy: 0,
    fluency: 0,
    terminology: 0,
    style: 0,
    localeConventions: 0,
  };
  for (const e of errors) penalty[e.category] += MQM_WEIGHTS[e.severity];
  const scores = Object.fromEntries(
    MQM_CATEGORIES.map((c) => [c, round1(Math.min(5, Math.max(0, 5 - penalty[c] / n)))]),
  ) as unknown as JudgeScores;
  const overall = round1(MQM_CATEGORIES.reduce((s, c) => s + scores[c], 0) / MQM_CATEGORIES.length);
  return { scores, overall };
}
