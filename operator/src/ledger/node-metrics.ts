// The few gauges the operator reads from a ledger node's GET /metrics (Prometheus text exposition) to see whether
// consensus makes progress: the round at the open height, the records waiting in the mempool, and how many rounds
// the node has moved past round 0. The spec's /chain has no round and no pending work, so these come from the
// node's metrics, under the names both sides import from ledger-protocol (metric-names.ts).
import { MEMPOOL_METRIC, ROUND_CHANGES_METRIC, ROUND_METRIC } from '@scriptorium/ledger-protocol';

/** What the operator reads from a node's metrics. */
export interface ConsensusView {
  round: number;
  mempoolRecords: number;
  /** Absent on a node that does not export it. */
  roundChanges: number | undefined;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)(?:\s+-?\d+)?$/;

/**
 * Reads the unlabelled samples of the three metrics from a text exposition. Comments, other metrics, labelled
 * samples and malformed lines are skipped; `undefined` when the round or the mempool gauge is missing or not a
 * finite non-negative number (the body is not a ledger node's).
 *
 * @example parseConsensusMetrics('scriptorium_ledger_round 2\nscriptorium_ledger_mempool_records 5\n')
 *          // → { round: 2, mempoolRecords: 5, roundChanges: undefined }
 */
export function parseConsensusMetrics(text: string): ConsensusView | undefined {
  const wanted = new Set([ROUND_METRIC, MEMPOOL_METRIC, ROUND_CHANGES_METRIC]);
  const values = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match || match[2] !== undefined) continue;
    const name = match[1] ?? '';
    if (!wanted.has(name) || values.has(name)) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value) && value >= 0) values.set(name, value);
  }
  const round = values.get(ROUND_METRIC);
  const mempoolRecords = values.get(MEMPOOL_METRIC);
  if (round === undefined || mempoolRecords === undefined) return undefined;
  return { round, mempoolRecords, roundChanges: values.get(ROUND_CHANGES_METRIC) };
}
