// The tamper notification: what a webhook receives as its JSON body and what a syslog message
// carries as structured data. It is built only from a finalized block: the block's chain id,
// height and hash, the TAMPERED record and its light evidence (the same body as GET /evidence: the
// record's Merkle proof, its block's finality certificate and every membership block below it), so a
// receiver can keep it and verify it, years later, from the genesis block alone.
import type { IntegrityRecord, LightEvidence } from '@scriptorium/ledger-protocol';

export const TAMPER_EVENT = 'tamper';

export interface TamperEvent {
  /** Event type, `tamper`. */
  type: typeof TAMPER_EVENT;
  /** The record id: also the webhook's idempotency key. */
  id: string;
  chain_id: string;
  height: number;
  /** The record's index in its block (GET /evidence/{height}/{index}). */
  index: number;
  block_hash: string;
  /** Block timestamp (ms since the epoch, chosen by its proposer). */
  block_time: number;
  record: IntegrityRecord;
  evidence: LightEvidence;
}

/** The event of a record's light evidence (the record is the evidence's proven record). */
export function tamperEvent(input: {
  chainId: string;
  blockTime: number;
  record: IntegrityRecord;
  evidence: LightEvidence;
}): TamperEvent {
  const proof = input.evidence.proof;
  return {
    type: TAMPER_EVENT,
    id: input.record.id,
    chain_id: input.chainId,
    height: proof.height,
    index: proof.index,
    block_hash: proof.block_hash,
    block_time: input.blockTime,
    record: input.record,
    evidence: input.evidence,
  };
}
