/** Wire and storage shapes of the chain: zod schemas are the single source of the types. */
import * as z from 'zod';

export const HashHex = z.string().regex(/^[0-9a-f]{64}$/, 'want 64 lower-case hex characters');
export const PublicKeyHex = z.string().regex(/^[0-9a-f]{64}$/, 'want a 64-hex raw Ed25519 public key');
export const SignatureHex = z.string().regex(/^[0-9a-f]{128}$/, 'want a 128-hex Ed25519 signature');
export const ChainId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9._-]+$/, 'chain id: letters, digits, dot, underscore, dash');
export const Height = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
export const Round = z.number().int().min(0).max(1_000_000);

/**
 * An integrity record: an observation of an attribute value of an entity. Only `id` is fixed here;
 * the broker watcher defines the other fields (any JSON). Its canonical form (RFC 8785) is the Merkle leaf.
 * `id` is required here and absent from a ValidatorChange, so a record and a change never share a leaf.
 */
export const IntegrityRecord = z.object({ id: z.string().min(1).max(256) }).catchall(z.json());
export type IntegrityRecord = z.infer<typeof IntegrityRecord>;

export const ValidatorChange = z.strictObject({
  action: z.enum(['ADD', 'REMOVE']),
  validator: PublicKeyHex,
});
export type ValidatorChange = z.infer<typeof ValidatorChange>;

/** The header: what the block hash covers. The consensus round is deliberately NOT part of it. */
export const BlockHeader = z.strictObject({
  chain_id: ChainId,
  height: Height,
  parent_hash: HashHex,
  /**
   * SHA-256(0x01 ‖ MTH(records) ‖ MTH(validator changes)): an interior node over the RFC 6962 tree of the records
   * and the RFC 6962 tree of the changes, each leaf its canonical form (`bodyRoot`). A change proves against it in
   * log2(changes) + 1 steps, without the block's records.
   */
  merkle_root: HashHex,
  /** Proposer's public key; '' for genesis. */
  proposer: z.union([PublicKeyHex, z.literal('')]),
  /** Milliseconds since the epoch, chosen by the proposer. */
  timestamp: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  record_count: z.number().int().min(0),
  change_count: z.number().int().min(0),
  /**
   * Height of the most recent earlier block that carried validator changes (0 for genesis and while no later
   * block has). Each such block's header names the one before it, so a sealed header commits to the whole
   * back-chain of membership blocks below it: a light client finds every validator-set change from one header.
   */
  prev_membership_height: Height,
});
export type BlockHeader = z.infer<typeof BlockHeader>;

/** A commit seal: the validator's signature over the block hash, bound to chain id, height and round. */
export const CommitSignature = z.strictObject({
  validator: PublicKeyHex,
  round: Round,
  signature: SignatureHex,
});
export type CommitSignature = z.infer<typeof CommitSignature>;

export const MAX_RECORDS_PER_BLOCK = 10_000;
export const MAX_CHANGES_PER_BLOCK = 64;

export const Block = z.strictObject({
  header: BlockHeader,
  records: z.array(IntegrityRecord).max(MAX_RECORDS_PER_BLOCK),
  validator_changes: z.array(ValidatorChange).max(MAX_CHANGES_PER_BLOCK),
  /** The finality certificate: a quorum of commit seals of one round from the height's active set. */
  commit_signatures: z.array(CommitSignature).max(1024),
});
export type Block = z.infer<typeof Block>;

export const GENESIS_PARENT_HASH = '0'.repeat(64);
