/**
 * Consensus messages (QBFT / IBFT 2.0): zod schemas (the single source of the types), the bytes each
 * signature covers, and signing / signature verification helpers.
 *
 * Wire shape is flat: `{type, chain_id, height, round, author, ...signed fields, signature, ...extras}`.
 * The signature covers the signed fields only, bound to a domain tag of type and chain id plus height
 * and round (see `signingBytes` in signing.ts). Extras (a PRE-PREPARE's block and round-change
 * certificate, a ROUND_CHANGE's prepared block and prepared certificate) are justified by their own
 * content and signatures, not by the outer signature.
 */
import * as z from 'zod';
import { verifySignature } from '#platform-crypto';
import type { Verify } from './finality.ts';
import { Block, ChainId, HashHex, Height, PublicKeyHex, Round, SignatureHex } from './schemas.ts';
import { sealBytes, signingBytes } from './signing.ts';

const MAX_CERT = 1024;

const base = {
  chain_id: ChainId,
  height: Height.min(1),
  round: Round,
  author: PublicKeyHex,
  signature: SignatureHex,
};

export const PrepareMessage = z.strictObject({ type: z.literal('PREPARE'), ...base, block_hash: HashHex });
export type PrepareMessage = z.infer<typeof PrepareMessage>;

export const CommitMessage = z.strictObject({
  type: z.literal('COMMIT'),
  ...base,
  block_hash: HashHex,
  /** Commit seal: signature over the block hash (sealBytes), becomes part of the finality certificate. */
  seal: SignatureHex,
});
export type CommitMessage = z.infer<typeof CommitMessage>;

const roundChangeSigned = {
  type: z.literal('ROUND_CHANGE'),
  ...base,
  /** The round and block hash this node is prepared (locked) on, or null for both. */
  prepared_round: Round.nullable(),
  prepared_hash: HashHex.nullable(),
};

/** A ROUND_CHANGE as carried inside a round-change certificate (no block, no prepares). */
export const RoundChangeCore = z.strictObject(roundChangeSigned);
export type RoundChangeCore = z.infer<typeof RoundChangeCore>;

export const RoundChangeMessage = z.strictObject({
  ...roundChangeSigned,
  /** The prepared block (present iff prepared_hash is set). */
  prepared_block: Block.optional(),
  /** Prepared certificate: a quorum of PREPAREs for (height, prepared_round, prepared_hash). */
  prepares: z.array(PrepareMessage).max(MAX_CERT).optional(),
});
export type RoundChangeMessage = z.infer<typeof RoundChangeMessage>;

/** Round-change certificate attached to a PRE-PREPARE for round > 0. */
export const RoundChangeCertificate = z.strictObject({
  /** A quorum of ROUND_CHANGEs for (height, round). */
  round_changes: z.array(RoundChangeCore).max(MAX_CERT),
  /** The prepared certificate of the highest prepared round among them ([] when none is prepared). */
  prepares: z.array(PrepareMessage).max(MAX_CERT),
});
export type RoundChangeCertificate = z.infer<typeof RoundChangeCertificate>;

export const PrePrepareMessage = z.strictObject({
  type: z.literal('PRE-PREPARE'),
  ...base,
  block_hash: HashHex,
  block: Block,
  justification: RoundChangeCertificate.optional(),
});
export type PrePrepareMessage = z.infer<typeof PrePrepareMessage>;

export const ConsensusMessage = z.discriminatedUnion('type', [
  PrePrepareMessage,
  PrepareMessage,
  CommitMessage,
  RoundChangeMessage,
]);
export type ConsensusMessage = z.infer<typeof ConsensusMessage>;
export type MessageType = ConsensusMessage['type'];

/** Parses an untrusted POST /consensus body. Throws a ZodError (→ 400) on malformed input. */
export function parseMessage(body: unknown): ConsensusMessage {
  return ConsensusMessage.parse(body);
}

/** Like parseMessage, without throwing. */
export function safeParseMessage(body: unknown) {
  return ConsensusMessage.safeParse(body);
}

type Signable =
  | Omit<PrepareMessage, 'signature'>
  | Omit<CommitMessage, 'signature'>
  | Omit<RoundChangeCore, 'signature'>
  | Pick<PrePrepareMessage, 'type' | 'chain_id' | 'height' | 'round' | 'author' | 'block_hash'>;

/** The fields a message's signature covers (everything but the signature and the extras). */
export function signedFields(msg: Signable | ConsensusMessage): Record<string, unknown> {
  const common = { author: msg.author };
  switch (msg.type) {
    case 'PRE-PREPARE':
    case 'PREPARE':
      return { ...common, block_hash: msg.block_hash };
    case 'COMMIT':
      return { ...common, block_hash: msg.block_hash, seal: msg.seal };
    case 'ROUND_CHANGE':
      return { ...common, prepared_round: msg.prepared_round, prepared_hash: msg.prepared_hash };
  }
}

/** The exact bytes the author signs for a message. */
export function messageSigningBytes(msg: Signable | ConsensusMessage): Uint8Array {
  return signingBytes(msg.type, msg.chain_id, msg.height, msg.round, signedFields(msg));
}

/**
 * Checks the outer signature of a message (not its justification; the engine checks those).
 * @example if (!verifyMessage(msg)) reply(400)
 */
export function verifyMessage(msg: ConsensusMessage, verify: Verify = verifySignature): boolean {
  return verify(msg.author, messageSigningBytes(msg), msg.signature);
}

/** Checks a COMMIT's seal over its block hash. */
export function verifySeal(msg: CommitMessage, verify: Verify = verifySignature): boolean {
  return verify(msg.author, sealBytes(msg.chain_id, msg.height, msg.round, msg.block_hash), msg.seal);
}

/** Strips a ROUND_CHANGE to the part carried in a round-change certificate. */
export function roundChangeCore(msg: RoundChangeMessage | RoundChangeCore): RoundChangeCore {
  return {
    type: msg.type,
    chain_id: msg.chain_id,
    height: msg.height,
    round: msg.round,
    author: msg.author,
    signature: msg.signature,
    prepared_round: msg.prepared_round,
    prepared_hash: msg.prepared_hash,
  };
}
