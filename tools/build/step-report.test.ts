import { describe, expect, it } from 'vitest';
import { parseSteps, renderSteps } from './step-report.ts';

describe('ci step report', () => {
  it('reads the rows the steps library writes, skipping anything else, and prints them in order, with totals', () => {
    const rows = parseSteps(
      [
        'packages\t12\tran',
        'noise',
        'kube-bins/etcd\t37\tbuilt',
        'kube-bins/helm\t0\tcached',
        'unit\t208\tran',
        '',
      ].join('\n'),
    );
    expect(rows.map((r) => r.name)).toEqual(['packages', 'kube-bins/etcd', 'kube-bins/helm', 'unit']);
    const out = renderSteps(rows, 2211).split('\n');
    expect(out[2]).toMatch(/^ {2}kube-bins\/etcd +37 {2}built$/);
    expect(out[3]).toMatch(/^ {2}kube-bins\/helm +0 {2}cached$/);
    expect(out.at(-1)).toBe('  1 built (37 s), 1 cached; the whole run 36 min 51 s');
  });
});
