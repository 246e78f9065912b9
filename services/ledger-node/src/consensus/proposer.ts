import type { Block, ValidatorTimeline } from '@scriptorium/ledger-protocol';
import { blockHash, membershipPointerAfter } from '@scriptorium/ledger-protocol';
import type { HeightContext } from './types.ts';

/**
 * Proposer of (height, round): validators[(prevProposerIndex + 1 + round) mod N] over the active set.
 * @example proposerFor(ctx, 0)
 */
export function proposerFor(ctx: HeightContext, round: number): string {
  const n = ctx.validators.length;
  if (n === 0) throw new RangeError('empty validator set');
  const i = (((ctx.prevProposerIndex + 1 + round) % n) + n) % n;
  return ctx.validators[i] as string;
}

/**
 * The context of the height after `tip` (the last finalized block), from the validator timeline
 * (which must already contain `tip`).
 * @example engine.step({ type: 'start', ctx: heightContextAfter(tip, timeline) })
 */
export function heightContextAfter(tip: Block, timeline: ValidatorTimeline): HeightContext {
  const h = tip.header.height;
  if (timeline.tip !== h) throw new RangeError(`timeline tip ${timeline.tip} is not block ${h}`);
  return {
    height: h + 1,
    parentHash: blockHash(tip.header),
    prevMembershipHeight: membershipPointerAfter(tip.header),
    validators: timeline.at(h + 1),
    prevProposerIndex: h === 0 ? -1 : timeline.at(h).indexOf(tip.header.proposer),
  };
}
