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

/** Finalized blocks by height, durable on `append` (node/chain-state.ts's storage port). */
export interface BlockStorage<B> {
  /** Number of stored blocks (the next height to append). */
  readonly length: number;
  get(height: number): B | undefined;
  /** Durably appends the block at `height` (must be the next height). */
  append(height: number, block: B): void;
  close(): void;
}

export class BlockStore<B> implements BlockStorage<B> {
  private readonly wal: Wal;
  private readonly blocks: B[] = [];

  private constructor(wal: Wal) {
    this.wal = wal;
  }

  /** Opens `<dataDir>/blocks.wal`, loading every intact block. */
  static open<B>(dataDir: string): { store: BlockStore<B>; truncatedBytes: number } {
    mkdirSync(dataDir, { recursive: true });
    const { wal, records, truncatedBytes } = Wal.open(join(dataDir, 'blocks.wal'));
    const store = new BlockStore<B>(wal);
    for (const payload of records) {
      const entry = JSON.parse(payload.toString('utf8')) as StoredBlock<B>;
      if (entry.height !== store.blocks.length)
        throw new NodeError(
          'storage_corrupt',
          `blocks.wal: expected height ${store.blocks.length}, found ${entry.height}`,
        );
      store.blocks.push(entry.block);
    }
    return { store, truncatedBytes };
  }

  /** Number of stored blocks (the next height to append). */
  get length(): number {
    return this.blocks.length;
  }

  get(height: number): B | undefined {
    return Number.isInteger(height) && height >= 0 ? this.blocks[height] : undefined;
  }

  /** Durably appends the block at `height` (must be the next height). */
  append(height: number, block: B): void {
    if (height !== this.blocks.length)
      throw new NodeError('internal', `block store: append height ${height}, expected ${this.blocks.length}`);
    this.wal.append(Buffer.from(JSON.stringify({ height, block } satisfies StoredBlock<B>), 'utf8'));
    this.blocks.push(block);
  }

  close(): void {
    this.wal.close();
  }
}
