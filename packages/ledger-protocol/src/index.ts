// @scriptorium/ledger-protocol: the ledger's wire contract as code. Browser-safe: hashing and signature
// checks use node:crypto in Node and @noble in browsers (`#platform-crypto`); key generation and signing
// live in `@scriptorium/ledger-protocol/keys` (Node only).

export { platform, sha256, sha256Hex, verifySignature } from '#platform-crypto';
export {
  type BodyCheck,
  type BuildBlockInput,
  blockHash,
  bodyRoot,
  buildBlock,
  buildGenesis,
  checkBody,
  checkGenesis,
  checkLink,
  genesisFileContent,
  membershipPointerAfter,
  proofFor,
  proofShape,
} from './block.ts';
export {
  AcceptedBody,
  ChainStatus,
  ConsolePeersBody,
  MAX_CHANGES_PER_REQUEST,
  MAX_PEERS,
  MAX_RECORDS_PER_REQUEST,
  MembershipBody,
  MempoolBody,
  MerkleProofBody,
  NodeId,
  PeerListBody,
  PeersBody,
  ProofStepSchema,
} from './bodies.ts';
export { canonicalBytes, canonicalize } from './canonical-json.ts';
export { type ChainStep, ChainVerifier, verifyChain } from './chain-verify.ts';
export { isLightEvidence, parseEvidence, type VerifyEvidenceOptions, verifyEvidence } from './evidence.ts';
export {
  type FinalityCheck,
  type FinalityReport,
  finalityReport,
  type SealStatus,
  type Verify,
  verifyFinality,
} from './finality.ts';
export { concatBytes, fromHex, toHex } from './hex.ts';
export {
  type EvidenceReport,
  LIGHT_EVIDENCE_FORMAT,
  LightEvidence,
  lightEvidence,
  MembershipEvidence,
  membershipBelow,
  membershipEvidence,
  SealedHeader,
  verifyLightEvidence,
  verifyLightFinality,
} from './light-evidence.ts';
export {
  leafHash,
  merkleProof,
  merkleRoot,
  merkleRootBytes,
  nodeHash,
  type ProofStep,
  pathShape,
  rootFromPath,
  type Sha256,
  splitPoint,
} from './merkle.ts';
export {
  CommitMessage,
  ConsensusMessage,
  type MessageType,
  messageSigningBytes,
  PrePrepareMessage,
  PrepareMessage,
  parseMessage,
  RoundChangeCertificate,
  RoundChangeCore,
  RoundChangeMessage,
  roundChangeCore,
  safeParseMessage,
  signedFields,
  verifyMessage,
  verifySeal,
} from './messages.ts';
export { MEMPOOL_METRIC, MISSED_CHANGES_METRIC, ROUND_CHANGES_METRIC, ROUND_METRIC } from './metric-names.ts';
export { nobleSha256, nobleSha256Hex, nobleVerify } from './noble.ts';
export {
  formatPeerSpec,
  HOST_PORT_PATTERN,
  PEER_SPEC_PATTERN,
  type PeerSpec,
  parseHostPort,
  parsePeerSpec,
  peerSpecSchema,
} from './peer-spec.ts';
export { leafData, type VerifyProofInput, verifyProof } from './proof.ts';
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
export {
  boolSetting,
  intSetting,
  NODE_SETTING_NAMES,
  type NodeEnvVar,
  type NodeSettingName,
  type NodeSettings,
  nodeSettings,
  SECRET_SETTINGS,
} from './settings.ts';
export { PROTOCOL_DOMAIN, sealBytes, signingBytes } from './signing.ts';
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
