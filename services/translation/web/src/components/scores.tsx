// Quality scores, 0 to 5 per dimension, as labelled meters.

const DIMENSIONS = [
  ['accuracy', 'Accuracy'],
  ['fluency', 'Fluency'],
  ['terminology', 'Terminology'],
  ['style', 'Style'],
  ['localeConventions', 'Locale conventions'],
] as const;

export type ScoreSet = Record<(typeof DIMENSIONS)[number][0], number>;

export function Scores({ scores, overall, judge }: { scores: ScoreSet; overall?: number; judge?: string }) {
  return (
    <div class="scores">
      {overall !== undefined && (
        <p>
          <strong>Score {overall.toFixed(1)} / 5</strong>
          {judge === 'heuristic' ? ' (heuristic judge built on the validators)' : judge ? ` (${judge} judge)` : ''}
        </p>
      )}
      <dl class="score-list">
        {DIMENSIONS.map(([key, label]) => (
          <div key={key} class="score-row">
            <dt>{label}</dt>
            <dd>
              <meter min={0} max={5} low={2.5} high={4} optimum={5} value={scores[key]} aria-label={`${label} score`} />{' '}
              {scores[key].toFixed(1)}
            </dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
