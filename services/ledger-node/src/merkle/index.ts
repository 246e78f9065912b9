export { merkleProof, merkleRoot, merkleRootBytes, splitPoint } from './tree.ts';
export {
  type LeafKind,
  leafData,
  leafHash,
  nobleSha256Concat,
  nodeHash,
  type ProofStep,
  rootFromPath,
  type Sha256,
  type VerifyProofInput,
  verifyProof,
} from './verify.ts';
