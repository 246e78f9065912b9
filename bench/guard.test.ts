import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  comparableRuns,
  extractFigures,
  formatGroupContext,
  formatJudgment,
  type GuardedPart,
  type HistoryEntry,
  judgeRun,
  MIN_RUNS,
  runVerdict,
  toleranceFor,
  valueAt,
} from './guard.ts';
import { GUARDED_PARTS } from './guard-figures.ts';

const machine = { cores: 2, memoryGiB: 24, cpu: 'AMD EPYC' };

const part: GuardedPart = {
  part: 'demo',
  group: 'demo program',
  resultsAt: ['at'],
  variantEnv: { SIZE: '4' },
  figures: [
    {
      name: 'rate',
      label: 'rate',
      path: 'rate',
      better: 'higher',
      unit: 'ops/s',
      kind: 'speed',
      tolerance: 0.05,
    },
    {
      name: 'rss',
      label: 'rss',
      path: 'rss',
      better: 'lower',
      unit: 'MB',
      kind: 'memory',
      tolerance: 0.05,
    },
  ],
};

let clock = 0;
function run(figures: Record<string, number>, over: Partial<HistoryEntry> = {}): HistoryEntry {
  clock++;
  return {
    part: 'demo',
    at: new Date(Date.UTC(2026, 10, 28, 0, clock)).toISOString(),
    resultsAt: `r${clock}`,
    commit: `c${clock}`,
    machine,
    load: { start: 1, end: 1 },
    variant: { SIZE: '4' },
    figures,
    guard: 'pass',
    ...over,
  };
}

// Three comparable runs: rate 1000, 950, 900 (spread 10 % of the best); rss 200, 210, 220 (spread 10 %).
const history = [run({ rate: 1000, rss: 200 }), run({ rate: 950, rss: 210 }), run({ rate: 900, rss: 220 })];
const verdicts = (h: readonly HistoryEntry[], figures: Record<string, number>, over: Partial<HistoryEntry> = {}) =>
  Object.fromEntries(judgeRun(part, run(figures, over), h).figures.map((f) => [f.figure.name, f.verdict]));

describe('the regression guard', () => {
  it('fails a drop beyond the noise measured for the figure, and says so with the figures', () => {
    const j = judgeRun(part, run({ rate: 880, rss: 205 }), history);
    expect(j.failed).toBe(true);
    expect(j.figures[0]).toMatchObject({ verdict: 'fail', best: 1000, tolerance: { from: 'history', runs: 3 } });
    expect(j.figures[0]!.worseBy).toBeCloseTo(0.12);
    expect(runVerdict(j)).toEqual({ guard: 'fail', failed: ['rate'] });
    const text = formatJudgment(j).join('\n');
    expect(text).toMatch(
      /FAIL\s+speed\s+rate \(higher is better\)\s+880 ops\/s\s+1,000 ops\/s\s+12\.0 % worse\s+10\.0 %/,
    );
    expect(text).toContain('REGRESSION in bench/demo: rate 880 ops/s (best 1,000, 12.0 % worse, tolerance 10.0 %)');
  });

  it('passes a drop within the noise (the worst comparable run is still a pass)', () => {
    expect(verdicts(history, { rate: 900, rss: 205 })).toEqual({ rate: 'pass', rss: 'pass' });
    expect(runVerdict(judgeRun(part, run({ rate: 920, rss: 215 }), history))).toEqual({ guard: 'pass' });
  });

  it('judges lower-is-better figures the other way round', () => {
    expect(verdicts(history, { rate: 1000, rss: 221 })).toEqual({ rate: 'pass', rss: 'fail' });
    expect(verdicts(history, { rate: 1000, rss: 190 })).toEqual({ rate: 'pass', rss: 'best' });
    expect(verdicts(history, { rate: 1100, rss: 200 })).toEqual({ rate: 'best', rss: 'pass' });
  });

  it('positive control: the seeded ledger history fails the saturation of the runs with the memory settings', () => {
    const seeded = readFileSync(join(import.meta.dirname, 'results', 'history', 'ledger.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as HistoryEntry);
    const ledger = GUARDED_PARTS.find((p) => p.part === 'ledger')!;
    // The side-by-side run: 8,267 records/s at N = 4 on a quiet machine (the light p50 of the best runs).
    const current: HistoryEntry = {
      ...seeded.at(-1)!,
      resultsAt: 'issue-28',
      load: { start: 0.5, end: 1.5 },
      figures: { n4_saturation: 8267, n4_light_p50: 40, n4_5000_p99: 200, catch_up: 90 },
    };
    const j = judgeRun(ledger, current, seeded);
    expect(j.figures.map((f) => f.verdict)).toEqual(['fail', 'pass', 'pass', 'pass']);
    // And the same history passes a run as good as the quiet runs it holds.
    const ok = judgeRun(ledger, { ...current, figures: { ...current.figures, n4_saturation: 13_300 } }, seeded);
    expect(ok.failed).toBe(false);
  });

  it('does not compare a different kind of machine, nor another variant of the part', () => {
    const other = { cores: 8, memoryGiB: 32, cpu: 'Intel Xeon' };
    expect(verdicts(history, { rate: 100, rss: 900 }, { machine: other })).toEqual({
      rate: 'no-baseline',
      rss: 'no-baseline',
    });
    expect(verdicts(history, { rate: 100, rss: 900 }, { machine: { ...machine, memoryGiB: 16 } }).rate).toBe(
      'no-baseline',
    );
    expect(verdicts(history, { rate: 100, rss: 900 }, { variant: { SIZE: '7' } }).rate).toBe('no-baseline');
  });

  it('does not compare runs at a very different load per core', () => {
    const quiet = [run({ rate: 2000 }, { load: { start: 0.2, end: 0.4 } })];
    const busy = run({ rate: 800 }, { load: { start: 6, end: 7 } }); // 3.5 per core against 0.2
    expect(comparableRuns(quiet, busy)).toEqual([]);
    expect(verdicts(quiet, { rate: 800 }, { load: { start: 6, end: 7 } }).rate).toBe('no-baseline');
    // Within the window it is compared (and here fails).
    expect(verdicts(quiet, { rate: 800 }, { load: { start: 1, end: 2 } }).rate).toBe('fail');
  });

  it('uses the default tolerance below MIN_RUNS runs, the measured spread from then on, floored by the default', () => {
    const figure = part.figures[0]!;
    expect(toleranceFor(figure, [1000, 800])).toEqual({ value: 0.05, from: 'default', runs: 2 });
    expect(toleranceFor(figure, [1000, 800, 900])).toMatchObject({ value: 0.2, from: 'history', runs: MIN_RUNS });
    expect(toleranceFor(figure, [1000, 999, 998])).toMatchObject({ value: 0.05, spread: 0.002 });
  });

  it('leaves failed runs, skipped runs and the runs before an accepted trade-off out of the baseline', () => {
    const h = [
      run({ rate: 2000, rss: 100 }),
      run({ rate: 990, rss: 200 }, { guard: 'accepted', accepted: 'rss for rate' }),
      run({ rate: 1000, rss: 210 }),
      run({ rate: 500, rss: 150 }, { guard: 'fail', failed: ['rate', 'rss'] }),
      run({ rate: 3000, rss: 50 }, { guard: 'skipped' }),
    ];
    // Left: 990 / 200 and 1000 / 210, two runs (the default tolerance, 5 %).
    const j = judgeRun(part, run({ rate: 960, rss: 212 }), h);
    expect(j.figures.map((f) => [f.best, f.verdict])).toEqual([
      [1000, 'pass'],
      [200, 'fail'],
    ]);
  });

  it('does not judge a run against its own record (the same results JSON)', () => {
    const h = [run({ rate: 1000 }, { resultsAt: 'same' })];
    expect(verdicts(h, { rate: 1000 }, { resultsAt: 'same' }).rate).toBe('no-baseline');
  });

  it('prints the other parts of the group (memory beside speed) as last recorded', () => {
    const mem: GuardedPart = { ...part, part: 'demo-memory', figures: [part.figures[1]!] };
    const h = [
      run({ rss: 300 }, { part: 'demo-memory' }),
      run({ rss: 250 }, { part: 'demo-memory', settings: { flags: '--small' } }),
    ];
    const lines = formatGroupContext('demo program', [part, mem], new Set(['demo']), h, machine);
    expect(lines[0]).toContain('bench/demo-memory as last recorded');
    expect(lines[0]).toContain('settings: flags: --small');
    expect(lines[1]).toMatch(/memory\s+rss \(lower is better\)\s+250 MB\s+best 250 MB/);
  });
});

describe('figures in a results JSON', () => {
  const json = {
    at: 't',
    clusters: [
      { validators: 4, saturation: { rate: 13_511 } },
      { validators: 7, saturation: { rate: 7_669 } },
    ],
    idle: { rss_per_node: [203, 235, 186] },
    section: { at: '2026-11-20T00:00:00Z', rss: 347 },
  };

  it('walks objects, picks an array element by key, reduces an array', () => {
    expect(valueAt(json, 'clusters[validators=4].saturation.rate')).toBe(13_511);
    expect(valueAt(json, 'clusters[validators=7].saturation.rate')).toBe(7_669);
    expect(valueAt(json, 'clusters[validators=10].saturation.rate')).toBeUndefined();
    expect(valueAt(json, 'idle.rss_per_node[max]')).toBe(235);
    expect(valueAt(json, 'idle.rss_per_node[min]')).toBe(186);
    expect(valueAt(json, 'idle.rss_per_node[1]')).toBe(235);
    expect(valueAt(json, 'at')).toBeUndefined();
  });

  it('leaves out a figure whose section is older than the run (a part that keeps earlier sections)', () => {
    const p: GuardedPart = {
      ...part,
      figures: [{ ...part.figures[1]!, path: 'section.rss', at: 'section.at' }],
    };
    expect(extractFigures(p, json)).toEqual({ rss: 347 });
    expect(extractFigures(p, json, '2026-11-19T00:00:00Z')).toEqual({ rss: 347 });
    expect(extractFigures(p, json, '2026-11-21T00:00:00Z')).toEqual({});
  });

  it('finds every guarded figure in the results committed in bench/results/', () => {
    for (const g of GUARDED_PARTS) {
      const results = JSON.parse(readFileSync(join(import.meta.dirname, 'results', `${g.part}.json`), 'utf8'));
      expect(Object.keys(extractFigures(g, results)).sort(), g.part).toEqual(g.figures.map((f) => f.name).sort());
    }
  });
});
