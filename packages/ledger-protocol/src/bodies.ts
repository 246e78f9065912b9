// The bodies of the node's HTTP API that other parts read or send (spec section 2 and 4): the operator,
// the browser console and the node itself parse them with these schemas, so a field exists in one place.
import * as z from 'zod';
import { HOST_PORT_PATTERN, PEER_SPEC_PATTERN, peerSpecSchema } from './peer-spec.ts';
import { HashHex, Height, IntegrityRecord, PublicKeyHex, ValidatorChange } from './schemas.ts';

/** Most validator changes one POST /membership carries. */
export const MAX_CHANGES_PER_REQUEST = 64;
/** Most records one POST /mempool carries. */
export const MAX_RECORDS_PER_REQUEST = 100_000;
/** Most peer specs one POST /peers carries, and the registry's size. */
export const MAX_PEERS = 1024;

/** A node id: what `NODE_ID` and peer specs allow. */
export const NodeId = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'expected 1-64 of [A-Za-z0-9._-]' });

/**
 * GET /chain (spec section 2, "Chain status"). `validators` is the size of the active set and equals the
 * number of `validator_keys`; `quorum` is `quorumSize(validators)`.
 */
export const ChainStatus = z
  .object({
    node_id: NodeId,
    height: Height,
    latest_hash: HashHex,
    validators: z.int().min(0).max(10_000),
    quorum: z.int().min(0).max(10_000),
    is_validator: z.boolean(),
    validator_keys: z.array(PublicKeyHex).max(10_000),
  })
  .refine((b) => b.validator_keys.length === b.validators, {
    message: 'validators does not equal the number of validator_keys',
  })
  .refine((b) => new Set(b.validator_keys).size === b.validator_keys.length, {
    message: 'validator_keys holds a key twice',
  });
export type ChainStatus = z.infer<typeof ChainStatus>;

/** One step of a Merkle audit path, leaf upwards; `right: true` means the sibling is hashed on the right. */
export const ProofStepSchema = z.strictObject({ sibling: HashHex, right: z.boolean() });

/** GET /proof/{height}/{index} (spec section 2, "Merkle proof"). */
export const MerkleProofBody = z.object({
  height: Height,
  index: z.int().min(0),
  merkle_root: HashHex,
  block_hash: HashHex,
  record: z.union([IntegrityRecord, ValidatorChange]),
  proof: z.array(ProofStepSchema).max(64),
});
export type MerkleProofBody = z.infer<typeof MerkleProofBody>;

/** POST /membership: `{changes}`. */
export const MembershipBody = z.object({
  changes: z.array(ValidatorChange).min(1).max(MAX_CHANGES_PER_REQUEST),
});
export type MembershipBody = z.infer<typeof MembershipBody>;

/** The answer to POST /membership and POST /mempool: how many items were new to the node. */
export const AcceptedBody = z.object({ accepted: z.int().min(0) });
export type AcceptedBody = z.infer<typeof AcceptedBody>;

/** POST /mempool: `{records}`. Each record is checked by the mempool (an object with an `id`). */
export const MempoolBody = z.object({ records: z.array(z.unknown()).max(MAX_RECORDS_PER_REQUEST) });

/** POST /peers: `{peers}` as peer-spec strings, parsed. */
export const PeersBody = z.object({ peers: z.array(peerSpecSchema).max(MAX_PEERS) });

/**
 * GET /ui/peers: the read-only peer list the console's board reads (open, CORS): this node and its round, and every
 * peer of its registry with the address the console reaches it at and the height this node last saw it at (from
 * its pull-sync poll; null when it did not answer). No token, no mutation: unlike GET /peers, it is safe to expose.
 */
export const ConsolePeersBody = z.object({
  node_id: NodeId,
  public_key: PublicKeyHex,
  round: z.int().min(0),
  peers: z
    .array(
      z.object({
        node_id: NodeId,
        public_key: PublicKeyHex,
        address: z.string().regex(HOST_PORT_PATTERN),
        height_seen: Height.nullable(),
      }),
    )
    .max(MAX_PEERS),
});
export type ConsolePeersBody = z.infer<typeof ConsolePeersBody>;

/** GET /health (spec section 4): liveness. */
export const HealthBody = z.object({ status: z.literal('ok') });
export type HealthBody = z.infer<typeof HealthBody>;

/** GET /peers: `{peers}`, the node's own spec first (strings, unparsed). */
export const PeerListBody = z.object({ peers: z.array(z.string().regex(PEER_SPEC_PATTERN)).max(MAX_PEERS + 1) });

/**
 * GET /checkpoint/witnesses: this node's view of witnessing (open read; the operator's status and metrics come from
 * it). `witnessed_size` is the size of the latest checkpoint cosigned by `threshold` witnesses (0: none yet);
 * `unwitnessed_since` the timestamp (ms) of the first block no such checkpoint covers, null when every block is
 * covered or no witness is configured. Per witness: the largest size it cosigned, when (its cosignature's time, s),
 * and, on the node that last submitted to it, the last error and attempt (ms).
 */
export const WitnessStatusBody = z.object({
  origin: z.string().min(1).max(256),
  size: Height,
  threshold: z.int().min(0).max(32),
  witnessed_size: Height,
  unwitnessed_since: z.int().min(0).nullable(),
  witnesses: z
    .array(
      z.object({
        name: z.string().min(1).max(63),
        size: Height,
        cosigned_at: z.int().min(0).nullable(),
        last_error: z.string().max(1000).nullable(),
        last_attempt: z.int().min(0).nullable(),
      }),
    )
    .max(32),
});
export type WitnessStatusBody = z.infer<typeof WitnessStatusBody>;

/** POST /checkpoint/sign (peer): sign the checkpoint of this size of your own chain. */
export const CheckpointSignBody = z.strictObject({ size: z.int().min(2).max(Number.MAX_SAFE_INTEGER) });
/** Its answer: the validator's signature line on that checkpoint's text. */
export const CheckpointSignatureBody = z.object({ line: z.string().min(1).max(512) });
/** POST /checkpoint/cosigned (peer): a checkpoint with its log signatures and the witnesses' cosignatures. */
export const CosignedCheckpointBody = z.strictObject({
  note: z
    .string()
    .min(1)
    .max(64 * 1024),
});
