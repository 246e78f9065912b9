// The platform crypto outside Node (browsers): @noble. Same signatures as crypto-node.ts; the
// package's `#platform-crypto` import picks one of the two by runtime condition.
export {
  nobleSha256 as sha256,
  nobleSha256Hex as sha256Hex,
  nobleVerify as verifySignature,
} from './noble.ts';

export const platform: 'node' | 'web' = 'web';
