import { createMetrics } from '@scriptorium/ledger-node';
import { MEMPOOL_METRIC, ROUND_CHANGES_METRIC, ROUND_METRIC } from '@scriptorium/ledger-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConsensusMetrics } from './node-metrics.ts';

describe('parseConsensusMetrics', () => {
  it("reads a real node registry's exposition: the names the operator reads are the node's", async () => {
    const node = createMetrics();
    node.round.set(3);
    node.mempoolSize.set(42);
    node.roundChanges.inc(7);
    node.height.set(10);
    expect(parseConsensusMetrics(await node.registry.metrics())).toEqual({
      round: 3,
      mempoolRecords: 42,
      roundChanges: 7,
    });
  });

  it('skips comments, labelled samples, other metrics, timestamps and bad values', () => {
    const text = [
      '# HELP scriptorium_ledger_round Current consensus round',
      '# TYPE scriptorium_ledger_round gauge',
      `${ROUND_METRIC}{shard="a"} 9`,
      `${ROUND_METRIC}_bucket 4`,
      `${ROUND_METRIC} 2 1700000000000`,
      `${MEMPOOL_METRIC} NaN`,
      `${MEMPOOL_METRIC} -1`,
      `${MEMPOOL_METRIC} 5`,
      `${ROUND_CHANGES_METRIC} +Inf`,
    ].join('\n');
    expect(parseConsensusMetrics(text)).toEqual({ round: 2, mempoolRecords: 5, roundChanges: undefined });
  });

  it('is undefined without the round or the mempool gauge', () => {
    expect(parseConsensusMetrics('')).toBeUndefined();
    expect(parseConsensusMetrics(`${ROUND_METRIC} 1\n`)).toBeUndefined();
    expect(parseConsensusMetrics(`${MEMPOOL_METRIC} 1\n`)).toBeUndefined();
    expect(parseConsensusMetrics('<html>not metrics</html>')).toBeUndefined();
  });

  it('never throws, and returns only finite non-negative numbers, whatever the body', () => {
    const line = fc.oneof(
      fc.string(),
      fc
        .constantFrom(ROUND_METRIC, MEMPOOL_METRIC, ROUND_CHANGES_METRIC)
        .chain((name) => fc.oneof(fc.double(), fc.string(), fc.integer()).map((v) => `${name} ${v}`)),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 20 }), (lines) => {
        const view = parseConsensusMetrics(lines.join('\n'));
        if (view === undefined) return;
        for (const v of [view.round, view.mempoolRecords, view.roundChanges ?? 0]) {
          expect(Number.isFinite(v) && v >= 0).toBe(true);
        }
      }),
    );
  });
});
