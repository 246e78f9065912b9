export {
  createSigner,
  generateKeyPair,
  isPublicKeyHex,
  type KeyPair,
  keyPairFromSeed,
  publicKeyOf,
  type Signer,
  verifySignature,
} from './ed25519.ts';
export { concatBytes, fromHex, toHex } from './hex.ts';
export { sha256, sha256Hex } from './sha256.ts';
