export { type BlockCacheLimits, type BlockStorage, BlockStore, type StoredBlock } from './block-store.ts';
export { StateStore } from './state-store.ts';
export { decodeFrames, encodeFrame, MAX_FRAME_BYTES, scanFrames, Wal, type WalOpenResult } from './wal.ts';
