// The tamper notification: what a webhook receives as its JSON body and what a syslog message
// carries as structured data. It is built only from a finalized block: the block's chain id,
// height and hash, the TAMPERED record and its Merkle proof (the same body as GET /proof).
import type { IntegrityRecord, MerkleProofBody } from '@scriptorium/ledger-protocol';

export const TAMPER_EVENT = 'tamper';

export type { MerkleProofBody };

export interface TamperEvent {
  /** Event type, `tamper`. */
  type: typeof TAMPER_EVENT;
  /** The record id: also the webhook's idempotency key. */
  id: string;
  chain_id: string;
  height: number;
  block_hash: string;
  /** Block timestamp (ms since the epoch, chosen by its proposer). */
  block_time: number;
  record: IntegrityRecord;
  proof: MerkleProofBody;
}

/** The event of a record's proof (the record is the proof's record, as GET /proof serves it). */
export function tamperEvent(input: {
  chainId: string;
  blockTime: number;
  record: IntegrityRecord;
  proof: MerkleProofBody;
}): TamperEvent {
  return {
    type: TAMPER_EVENT,
    id: input.record.id,
    chain_id: input.chainId,
    height: input.proof.height,
    block_hash: input.proof.block_hash,
    block_time: input.blockTime,
    record: input.record,
    proof: input.proof,
  };
}
