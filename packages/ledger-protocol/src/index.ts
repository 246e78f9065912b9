// @scriptorium/ledger-protocol: the ledger's wire contract as code. Browser-safe: hashing and signature
// checks use node:crypto in Node and @noble in browsers (`#platform-crypto`); key generation and signing
// live in `@scriptorium/ledger-protocol/keys` (Node only).

export { platform, sha256, sha256Hex, verifySignature } from '#platform-crypto';
export {
  BACKUP_FORMAT,
  BackupManifest,
  BackupSegment,
  type BackupStep,
  BackupVerifier,
  MANIFEST_KEY,
  parseManifest,
  segmentKey,
} from './backup.ts';
export { fromBase64, toBase64 } from './base64.ts';
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
  CheckpointSignatureBody,
  CheckpointSignBody,
  ConsolePeersBody,
  CosignedCheckpointBody,
  HealthBody,
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
  WitnessStatusBody,
} from './bodies.ts';
export { canonicalBytes, canonicalize } from './canonical-json.ts';
export { type ChainStep, ChainVerifier, verifyChain } from './chain-verify.ts';
export {
  blockLeafData,
  type Checkpoint,
  type CheckpointNote,
  defaultOrigin,
  formatCheckpoint,
  judgeLogSignatures,
  type LogSignatures,
  logSignatureLine,
  logSignedCheckpoint,
  logVerifierKey,
  ORIGIN_PATTERN,
  parseCheckpoint,
  parseCheckpointNote,
  rootHex,
} from './checkpoint.ts';
export {
  CheckpointEvidence,
  checkpointEvidence,
  judgeCheckpointEvidence,
  type WitnessRequirement,
} from './checkpoint-evidence.ts';
export { isLightEvidence, parseEvidence, type VerifyEvidenceOptions, verifyEvidence } from './evidence.ts';
export {
  type CheckpointVerdict,
  type EvidenceReport,
  MembershipEvidence,
  SealedHeader,
} from './evidence-walk.ts';
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
  LIGHT_EVIDENCE_FORMAT,
  LightEvidence,
  lightEvidence,
  membershipBelow,
  membershipEvidence,
  verifyLightEvidence,
  verifyLightFinality,
} from './light-evidence.ts';
export { LogTree } from './log-tree.ts';
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
  ALG_COSIGNATURE_V1,
  ALG_ED25519,
  cosignatureMessage,
  cosignatureTime,
  formatNote,
  formatVerifierKey,
  isValidKeyName,
  MAX_NOTE_SIGNATURES,
  type Note,
  type NoteSignature,
  noteKeyId,
  noteText,
  parseNote,
  parseVerifierKey,
  SIGNATURE_PREFIX,
  signatureLine,
  type VerifierKey,
  verifyNoteSignature,
} from './note.ts';
export {
  formatPeerSpec,
  HOST_PORT_PATTERN,
  PEER_SPEC_PATTERN,
  type PeerSpec,
  parseHostPort,
  parsePeerSpec,
  peerSpecSchema,
} from './peer-spec.ts';
export {
  judgeWithPrefetchedSignatures,
  type VerifyAsync,
  webCryptoVerify,
} from './prefetched-signatures.ts';
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
  BACKUP_SECRET_SETTINGS,
  type BackupEnvVar,
  type BackupSettingName,
  type BackupSettings,
  backupSettings,
  boolSetting,
  intSetting,
  NODE_SETTING_NAMES,
  type NodeEnvVar,
  type NodeSettingName,
  type NodeSettings,
  nodeSettings,
  SECRET_SETTINGS,
  WitnessEndpoint,
  WitnessLog,
  type WitnessSettings,
  witnessEndpointsSetting,
  witnessSettings,
} from './settings.ts';
export { PROTOCOL_DOMAIN, sealBytes, signingBytes } from './signing.ts';
export {
  consistencyProof,
  equalBytes,
  inclusionProof,
  MAX_PROOF_HASHES,
  type RangeHashes,
  rootFromInclusion,
  verifyConsistency,
  verifyInclusion,
} from './tlog-proof.ts';
export {
  ADD_CHECKPOINT_PATH,
  type AddCheckpoint,
  cosignatureLine,
  formatAddCheckpoint,
  formatSizeResponse,
  MAX_ADD_CHECKPOINT_BYTES,
  parseAddCheckpoint,
  parseCosignatureLines,
  parseSizeResponse,
  SIZE_CONTENT_TYPE,
} from './tlog-witness.ts';
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
export {
  type CosignatureReport,
  judgeCosignatures,
  type PolicyWitness,
  parseWitnessFlag,
  type WitnessPolicy,
  witnessPolicy,
} from './witness-policy.ts';
