import type { Block } from '@scriptorium/ledger-protocol';
import type { PersistedState } from '../src/consensus/index.ts';
import type { BlockStorage } from '../src/storage/index.ts';

/** Blocks in memory: the simulated node's block store (what the production one keeps in blocks.wal). */
export class MemoryBlockStore implements BlockStorage<Block> {
  readonly #blocks: Block[] = [];

  get length(): number {
    return this.#blocks.length;
  }

  get all(): readonly Block[] {
    return this.#blocks;
  }

  get(height: number): Block | undefined {
    return this.#blocks[height];
  }

  append(height: number, block: Block): void {
    if (height !== this.#blocks.length)
      throw new RangeError(`append height ${height}, expected ${this.#blocks.length}`);
    this.#blocks.push(block);
  }

  close(): void {}
}

/**
 * What survives a crash: the finalized blocks and the consensus state last persisted. The state goes through
 * JSON, as on disk, so anything not serializable fails loudly, and it is read back through the driver's schema.
 */
export class SimDisk {
  readonly blocks = new MemoryBlockStore();
  #state: string | null = null;
  writes = 0;

  saveState(state: PersistedState): void {
    this.#state = JSON.stringify(state);
    this.writes++;
  }

  loadState(): unknown {
    return this.#state === null ? undefined : JSON.parse(this.#state);
  }
}
