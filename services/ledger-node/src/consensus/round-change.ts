/** Round changes: timeouts, ROUND_CHANGE thresholds (f+1 joins, a quorum adopts), helping laggards. */
import { blockHash, maxFaulty, type RoundChangeMessage } from '@scriptorium/ledger-protocol';
import { MAX_ROUNDS_AHEAD } from './gate.ts';
import type { Height } from './height.ts';
import { tryPropose } from './proposal.ts';
import { validateRoundChange } from './validation/index.ts';

export function onTimeout(h: Height, height: number, round: number): void {
  if (!h.running || h.decided) return;
  if (height !== h.ctx.height || round !== h.round) return;
  h.enterRound(round + 1);
  sendRoundChange(h);
}

export function onRoundChange(h: Height, msg: RoundChangeMessage): void {
  const verdict = validateRoundChange(h.v, msg);
  if (!verdict.ok) {
    h.reject(msg, 'invalid', verdict.reason);
    return;
  }
  h.record(msg);
  if (msg.round > h.round) {
    // f+1 ROUND_CHANGEs for higher rounds: at least one honest node is there; join the lowest such round.
    const ahead = [...h.store.futureRoundChangeAuthors(h.round).values()].sort((a, b) => b - a);
    const f = maxFaulty(h.v.members.size);
    if (ahead.length >= f + 1) {
      h.enterRound(ahead[f] as number);
      sendRoundChange(h);
    }
  }
  const rcs = h.store.peek(msg.round)?.roundChanges;
  if (rcs && rcs.size >= h.v.quorum && msg.round > h.round) {
    // A quorum wants this round: adopt it.
    h.enterRound(msg.round);
    sendRoundChange(h);
  }
  tryPropose(h);
}

/** Signs and sends this round's ROUND_CHANGE (once), carrying the lock and its prepared certificate. */
function sendRoundChange(h: Height): void {
  if (h.sent.roundChange !== null || h.round === 0) return;
  const locked = h.locked;
  const unsigned = {
    ...h.base('ROUND_CHANGE'),
    prepared_round: locked ? locked.round : null,
    prepared_hash: locked ? blockHash(locked.block.header) : null,
  };
  const signed = h.sign<RoundChangeMessage>(unsigned as Omit<RoundChangeMessage, 'signature'>);
  const rc: RoundChangeMessage = locked
    ? { ...signed, prepared_block: locked.block, prepares: locked.prepares }
    : signed;
  h.sent.roundChange = rc;
  h.persist();
  h.broadcast(rc);
  h.record(rc);
  tryPropose(h);
}

/**
 * A validator still speaks in an older round: re-send our (already persisted) ROUND_CHANGE for the current
 * round, once per author and round, so that lagging nodes reach f+1 / quorum after a partition.
 */
export function helpLaggard(h: Height, author: string): void {
  const rc = h.sent.roundChange;
  if (rc === null || !h.v.members.has(author)) return;
  const key = `${author}:${h.round}`;
  if (h.helped.has(key) || h.helped.size > 4 * MAX_ROUNDS_AHEAD * h.v.members.size) return;
  h.helped.add(key);
  h.broadcast(rc);
}
