// The tamper notification: what a webhook receives as its JSON body and what a syslog message
// carries as structured data. It is built only from a finalized block: the block's chain id,
// height and hash, the TAMPERED record and its Merkle proof (the same body as GET /proof).
import type { IntegrityRecord } from '@scriptorium/ledger-protocol';

export const TAMPER_EVENT = 'tamper';

export interface ProofStep {
  sibling: string;
  right: boolean;
}

export interface MerkleProofBody {
  height: number;
  index: number;
  merkle_root: string;
  block_hash: string;
  record: IntegrityRecord;
  proof: ProofStep[];
}

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

export function tamperEvent(input: { chainId: string; blockTime: number; proof: MerkleProofBody }): TamperEvent {
  return {
    type: TAMPER_EVENT,
    id: input.proof.record.id,
    chain_id: input.chainId,
    height: input.proof.height,
    block_hash: input.proof.block_hash,
    block_time: input.blockTime,
    record: input.proof.record,
    proof: input.proof,
  };
}
