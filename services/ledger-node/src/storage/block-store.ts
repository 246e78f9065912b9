// Finalized blocks, appended in height order to a framed, fsynced log and held in memory.
// Blocks are self-verifying (finality certificate), so the store only checks order; the
// caller verifies before `append`. A torn tail (crash mid-write) is truncated on open.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { NodeError } from '../errors.ts';
import { Wal } from './wal.ts';

export interface StoredBlock<B> {
  height: number;
  block: B;
}

export class BlockStore<B> {
  private readonly wal: Wal;
  private readonly blocks: B[] = [];
  private readonly onIndex: ((block: B, height: number) => void) | undefined;

  private constructor(wal: Wal, onIndex?: (block: B, height: number) => void) {
    this.wal = wal;
    this.onIndex = onIndex;
  }

  /** Opens the store; `onIndex` is called for each block loaded and appended (e.g. to index record ids). */
  static open<B>(
    dataDir: string,
    onIndex?: (block: B, height: number) => void,
  ): { store: BlockStore<B>; truncatedBytes: number } {
    mkdirSync(dataDir, { recursive: true });
    const { wal, records, truncatedBytes } = Wal.open(join(dataDir, 'blocks.wal'));
    const store = new BlockStore<B>(wal, onIndex);
    for (const payload of records) {
      const entry = JSON.parse(payload.toString('utf8')) as StoredBlock<B>;
      if (entry.height !== store.blocks.length)
        throw new NodeError(
          'storage_corrupt',
          `blocks.wal: expected height ${store.blocks.length}, found ${entry.height}`,
        );
      store.blocks.push(entry.block);
      onIndex?.(entry.block, entry.height);
    }
    return { store, truncatedBytes };
  }

  /** Number of stored blocks (the next height to append). */
  get length(): number {
    return this.blocks.length;
  }

  /** Height of the last block, or -1 when empty. */
  get tipHeight(): number {
    return this.blocks.length - 1;
  }

  get(height: number): B | undefined {
    return Number.isInteger(height) && height >= 0 ? this.blocks[height] : undefined;
  }

  tip(): B | undefined {
    return this.blocks.at(-1);
  }

  /** Durably appends the block at `height` (must be the next height). */
  append(height: number, block: B): void {
    if (height !== this.blocks.length)
      throw new NodeError('internal', `block store: append height ${height}, expected ${this.blocks.length}`);
    this.wal.append(Buffer.from(JSON.stringify({ height, block } satisfies StoredBlock<B>), 'utf8'));
    this.blocks.push(block);
    this.onIndex?.(block, height);
  }

  close(): void {
    this.wal.close();
  }
}
