import type { Block } from '@scriptorium/ledger-protocol';
import type { PersistedState } from '../src/consensus/types.ts';

/**
 * What survives a crash: the finalized blocks and the engine's last persisted state. Writes go through
 * JSON, as on disk, so anything not serializable fails loudly.
 */
export class SimStorage {
  readonly blocks: Block[];
  #state: string | null = null;
  writes = 0;

  constructor(genesis: Block) {
    this.blocks = [genesis];
  }

  persist(state: PersistedState): void {
    this.#state = JSON.stringify(state);
    this.writes++;
  }

  loadState(): PersistedState | null {
    return this.#state === null ? null : (JSON.parse(this.#state) as PersistedState);
  }

  appendBlock(block: Block): void {
    this.blocks.push(block);
  }

  get tip(): Block {
    return this.blocks[this.blocks.length - 1] as Block;
  }
}
