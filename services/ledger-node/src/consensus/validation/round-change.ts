import type { RoundChangeCore, RoundChangeMessage } from '@scriptorium/ledger-protocol';
import { checkProposedBlock } from './block.ts';
import { checkCarried, fail, OK, type ValidationContext, type Verdict } from './context.ts';
import { validatePreparedCertificate } from './prepare.ts';

/** The signed fields of a ROUND_CHANGE: round ≥ 1, prepared round and hash both set (below the round) or both null. */
function checkRoundChangeFields(msg: RoundChangeCore | RoundChangeMessage): Verdict {
  if (msg.type !== 'ROUND_CHANGE') return fail('not a ROUND_CHANGE');
  if (msg.round < 1) return fail('ROUND_CHANGE for round 0');
  if ((msg.prepared_round === null) !== (msg.prepared_hash === null)) {
    return fail('ROUND_CHANGE: prepared round and hash must be set together');
  }
  if (msg.prepared_round !== null && msg.prepared_round >= msg.round) {
    return fail('ROUND_CHANGE: prepared round must be below the target round');
  }
  return OK;
}

/** A ROUND_CHANGE carried in a round-change certificate: its fields, and the envelope of a carried message. */
export function validateRoundChangeCore(v: ValidationContext, msg: RoundChangeCore | RoundChangeMessage): Verdict {
  const fields = checkRoundChangeFields(msg);
  return fields.ok ? checkCarried(v, msg) : fields;
}

/** A ROUND_CHANGE's content: its fields, plus the prepared block and a valid prepared certificate when prepared. */
export function validateRoundChange(v: ValidationContext, msg: RoundChangeMessage): Verdict {
  const core = checkRoundChangeFields(msg);
  if (!core.ok) return core;
  if (msg.prepared_round === null || msg.prepared_hash === null) {
    if (msg.prepared_block !== undefined || (msg.prepares !== undefined && msg.prepares.length > 0)) {
      return fail('ROUND_CHANGE: prepared block or certificate without a prepared round');
    }
    return OK;
  }
  if (msg.prepared_block === undefined) return fail('ROUND_CHANGE: prepared block missing');
  const block = checkProposedBlock(v, msg.prepared_block, msg.prepared_hash, false);
  if (!block.ok) return fail(`ROUND_CHANGE: ${block.reason}`);
  return validatePreparedCertificate(v, msg.prepares ?? [], msg.prepared_round, msg.prepared_hash);
}
