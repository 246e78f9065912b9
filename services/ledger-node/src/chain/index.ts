export {
  type BodyCheck,
  type BuildBlockInput,
  blockHash,
  blockLeaves,
  bodyRoot,
  buildBlock,
  buildGenesis,
  checkBody,
  checkLink,
  type MerkleProofResponse,
  proofFor,
} from './block.ts';
export { type FinalityCheck, verifyFinality } from './finality.ts';
export { blockHashOffline, verifyFinalityOffline } from './offline-verify.ts';
export {
  Block,
  BlockHeader,
  ChainId,
  CommitSignature,
  GENESIS_PARENT_HASH,
  HashHex,
  Height,
  IntegrityRecord,
  MAX_CHANGES_PER_BLOCK,
  MAX_RECORDS_PER_BLOCK,
  PublicKeyHex,
  Round,
  SignatureHex,
  ValidatorChange,
} from './schemas.ts';
export { PROTOCOL_DOMAIN, sealBytes, signingBytes } from './seal.ts';
export {
  type AppliedChanges,
  activeSetAt,
  applyChanges,
  createValidatorTimeline,
  maxFaulty,
  type NodeRole,
  quorumSize,
  type RoleChange,
  roleAt,
  roleChange,
  type ValidatorTimeline,
} from './validators.ts';
