// Finalized blocks, appended in height order to a framed, fsynced log (`blocks.wal`), and read back from it.
// Memory is bounded whatever the chain's length: the store keeps each block's offset in the file (8 bytes a
// height) and a small cache of recently used blocks; everything else is read from the file when asked for.
// Blocks are self-verifying (finality certificate), so the store only checks order; the caller verifies before
// `append`. A torn tail (crash mid-write) is truncated on open.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NodeError } from '../errors.ts';
import { Wal } from './wal.ts';

export interface StoredBlock<B> {
  height: number;
  block: B;
}

/** Finalized blocks by height, durable on `append` (node/chain-state.ts's storage port). */
export interface BlockStorage<B> {
  /** Number of stored blocks (the next height to append). */
  readonly length: number;
  get(height: number): B | undefined;
  /** The block's JSON text (what GET /blocks/{height} answers), when the store has it without serializing. */
  getJson?(height: number): string | undefined;
  /** Durably appends the block at `height` (must be the next height). */
  append(height: number, block: B): void;
  close(): void;
}

export interface BlockCacheLimits {
  /** Parsed blocks kept (default 32). */
  blocks?: number;
  /**
   * Their stored size, summed (default 2 MiB: three or four full 2000-record blocks of 0.5–0.7 MiB). A parsed
   * block takes about 1.4 times its stored size of heap, and the cache keeps what it holds for as long as no new
   * block comes: an idle node would carry the cache's whole size. What reads old blocks reads them once (a peer's
   * sync, the console) or reads the newest (proofs of a just-finalized block, the chain's own tip).
   */
  bytes?: number;
}

const DEFAULT_CACHE_BLOCKS = 32;
const DEFAULT_CACHE_BYTES = 2 * 1024 * 1024;

/** Every stored payload is `{"height":<h>,"block":<block>}`, written by JSON.stringify. */
const payloadPrefix = (height: number) => `{"height":${height},"block":`;

/** The height at the start of a payload, or -1 when it does not start like a stored block. */
function payloadHeight(payload: Buffer): number {
  const head = payload.toString('latin1', 0, Math.min(payload.length, 32));
  const m = /^\{"height":(\d{1,15}),"block":/.exec(head);
  return m ? Number(m[1]) : -1;
}

export class BlockStore<B> implements BlockStorage<B> {
  private readonly wal: Wal;
  /** Frame offset of each height in blocks.wal. */
  private offsets: Float64Array<ArrayBuffer>;
  private count = 0;
  /** Recently used blocks, least recently used first (Map keeps insertion order). */
  private readonly cache = new Map<number, { block: B; bytes: number }>();
  private cacheBytes = 0;
  private readonly maxCacheBlocks: number;
  private readonly maxCacheBytes: number;

  private constructor(wal: Wal, offsets: Float64Array<ArrayBuffer>, count: number, limits: BlockCacheLimits) {
    this.wal = wal;
    this.offsets = offsets;
    this.count = count;
    this.maxCacheBlocks = Math.max(1, limits.blocks ?? DEFAULT_CACHE_BLOCKS);
    this.maxCacheBytes = limits.bytes ?? DEFAULT_CACHE_BYTES;
  }

  /**
   * Opens `<dataDir>/blocks.wal`: scans it (every frame's CRC, heights in order) and indexes every intact
   * block without keeping any in memory.
   */
  static open<B>(dataDir: string, limits: BlockCacheLimits = {}): { store: BlockStore<B>; truncatedBytes: number } {
    mkdirSync(dataDir, { recursive: true });
    let offsets = new Float64Array(1024);
    let count = 0;
    const path = join(dataDir, 'blocks.wal');
    let wal: Wal | undefined;
    try {
      const scanned = Wal.scan(path, (payload, offset) => {
        const height = payloadHeight(payload);
        if (height !== count)
          throw new NodeError('storage_corrupt', `blocks.wal: expected height ${count}, found ${height}`);
        if (count === offsets.length) offsets = grow(offsets);
        offsets[count++] = offset;
      });
      wal = scanned.wal;
      return { store: new BlockStore<B>(wal, offsets, count, limits), truncatedBytes: scanned.truncatedBytes };
    } catch (err) {
      wal?.close();
      throw err;
    }
  }

  /** Number of stored blocks (the next height to append). */
  get length(): number {
    return this.count;
  }

  get(height: number): B | undefined {
    if (!Number.isInteger(height) || height < 0 || height >= this.count) return undefined;
    const hit = this.cache.get(height);
    if (hit) {
      this.cache.delete(height);
      this.cache.set(height, hit);
      return hit.block;
    }
    const payload = this.read(height);
    const block = (JSON.parse(payload.toString('utf8')) as StoredBlock<B>).block;
    this.remember(height, block, payload.length);
    return block;
  }

  /** Blocks held parsed in the cache now (at most the cache limits). */
  get cachedBlocks(): number {
    return this.cache.size;
  }

  getJson(height: number): string | undefined {
    if (!Number.isInteger(height) || height < 0 || height >= this.count) return undefined;
    const text = this.read(height).toString('utf8');
    // `{"height":h,"block":` … `}`: the block's own JSON is what lies between.
    return text.slice(payloadPrefix(height).length, -1);
  }

  /** Durably appends the block at `height` (must be the next height). */
  append(height: number, block: B): void {
    if (height !== this.count)
      throw new NodeError('internal', `block store: append height ${height}, expected ${this.count}`);
    const payload = Buffer.from(JSON.stringify({ height, block } satisfies StoredBlock<B>), 'utf8');
    const offset = this.wal.append(payload);
    if (this.count === this.offsets.length) this.offsets = grow(this.offsets);
    this.offsets[this.count++] = offset;
    this.remember(height, block, payload.length);
  }

  close(): void {
    this.cache.clear();
    this.wal.close();
  }

  private read(height: number): Buffer {
    const payload = this.wal.readAt(this.offsets[height] as number);
    if (!payload || payloadHeight(payload) !== height)
      throw new NodeError('storage_corrupt', `blocks.wal: the block at height ${height} cannot be read back`);
    return payload;
  }

  private remember(height: number, block: B, bytes: number): void {
    this.cache.set(height, { block, bytes });
    this.cacheBytes += bytes;
    for (const [h, entry] of this.cache) {
      if (this.cache.size <= 1 || (this.cache.size <= this.maxCacheBlocks && this.cacheBytes <= this.maxCacheBytes))
        break;
      this.cache.delete(h);
      this.cacheBytes -= entry.bytes;
    }
  }
}

function grow(a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> {
  const b = new Float64Array(a.length * 2);
  b.set(a);
  return b;
}
