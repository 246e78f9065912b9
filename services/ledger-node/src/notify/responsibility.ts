// Who delivers a notification: by default a receiver gets each TAMPERED record once per cluster,
// not once per validator. The rule:
//
// - The proposer of the block holding the record delivers at once (rank 0).
// - Every other validator of that height's active set has a rank: its distance after the proposer
//   in the set's order (1, 2, …). Rank r waits r × grace after the block's finalization, then asks
//   the lower-ranked validators whether they delivered it; if none answers "delivered", it
//   delivers itself.
//
// In the healthy case only the proposer delivers. When it is down, the next validator delivers one
// grace period later, and so on: at least once as long as one validator is up. A receiver may still
// see a repeat (a slow answer, a crash between delivery and its durable "done"); the idempotency key
// (the record id) lets it drop repeats.

/** This node's rank for a block: 0 for its proposer, then the distance after it in the active set; undefined when not in the set. */
export function deliveryRank(activeSet: readonly string[], proposer: string, self: string): number | undefined {
  const n = activeSet.length;
  const me = activeSet.indexOf(self);
  if (me < 0) return undefined;
  const p = activeSet.indexOf(proposer);
  if (p < 0) return me + 1; // proposer already removed: everyone is a backup, in set order
  return (me - p + n) % n;
}

/** The validators a node of `rank` asks before taking over: those of lower rank, proposer first. */
export function lowerRanked(activeSet: readonly string[], proposer: string, rank: number): string[] {
  const p = activeSet.indexOf(proposer);
  const out: string[] = [];
  for (let r = 0; r < rank; r++) {
    const key = p < 0 ? activeSet[r - 1] : activeSet[(p + r) % activeSet.length];
    if (key !== undefined) out.push(key);
  }
  return out;
}

/** When a node of `rank` may deliver an event from a block finalized at `finalizedAt`. */
export const deliverAt = (finalizedAt: number, rank: number, graceMs: number): number => finalizedAt + rank * graceMs;
