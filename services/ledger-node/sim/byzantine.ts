/**
 * Active Byzantine behaviour for twin nodes: per-peer equivocation and well-signed but invalid
 * messages. The key is Byzantine, so everything here is signed correctly with it; the honest engines
 * must reject or tolerate it.
 */
import {
  blockHash,
  buildBlock,
  type ConsensusMessage,
  messageSigningBytes,
  sealBytes,
} from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import type { Prng } from './prng.ts';

function randomHash(rng: Prng): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += rng.u32().toString(16).padStart(8, '0');
  return s;
}

function resign<T extends ConsensusMessage>(signer: Signer, msg: T): T {
  return { ...msg, signature: signer.sign(messageSigningBytes(msg)) };
}

/** A variant of `msg` for one peer (or the original). */
export function mutate(msg: ConsensusMessage, rng: Prng, signer: Signer): ConsensusMessage {
  switch (msg.type) {
    case 'PRE-PREPARE': {
      const pick = rng.int(0, 2);
      if (pick === 0) {
        // Equivocate: another block for the same round (valid on its own).
        const b = msg.block;
        const block = buildBlock({
          chainId: b.header.chain_id,
          height: b.header.height,
          parentHash: b.header.parent_hash,
          prevMembershipHeight: b.header.prev_membership_height,
          proposer: b.header.proposer,
          timestamp: b.header.timestamp + rng.int(1, 1000),
          records: b.records.slice(0, rng.int(0, b.records.length)),
          changes: b.validator_changes,
        });
        return resign(signer, { ...msg, block, block_hash: blockHash(block.header) });
      }
      if (pick === 1 && msg.justification) {
        const { justification: _dropped, ...rest } = msg;
        return resign(signer, rest);
      }
      return resign(signer, { ...msg, block_hash: randomHash(rng) });
    }
    case 'PREPARE':
      return rng.chance(0.5)
        ? resign(signer, { ...msg, block_hash: randomHash(rng) })
        : resign(signer, { ...msg, round: msg.round + rng.int(1, 3) });
    case 'COMMIT': {
      const block_hash = randomHash(rng);
      const seal = rng.chance(0.5) ? signer.sign(sealBytes(msg.chain_id, msg.height, msg.round, block_hash)) : msg.seal;
      return resign(signer, { ...msg, block_hash, seal });
    }
    case 'ROUND_CHANGE': {
      if (rng.chance(0.5) && msg.round > 0) {
        // Claim a lock without a certificate.
        const { prepared_block: _b, prepares: _p, ...core } = msg;
        return resign(signer, { ...core, prepared_round: msg.round - 1, prepared_hash: randomHash(rng) });
      }
      return resign(signer, { ...msg, round: msg.round + rng.int(1, 5) });
    }
  }
}
