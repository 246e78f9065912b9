import type {
  CommitMessage,
  PrePrepareMessage,
  PrepareMessage,
  RoundChangeMessage,
} from '@scriptorium/ledger-protocol';

/** The messages of one round, at most one per author and type (the first valid one wins). */
export class RoundMessages {
  proposal: PrePrepareMessage | null = null;
  readonly prepares = new Map<string, PrepareMessage>();
  readonly commits = new Map<string, CommitMessage>();
  readonly roundChanges = new Map<string, RoundChangeMessage>();

  /** PREPAREs for one block hash. */
  preparesFor(blockHash: string): PrepareMessage[] {
    return [...this.prepares.values()].filter((p) => p.block_hash === blockHash);
  }

  /** COMMITs grouped by block hash. */
  commitsByHash(): Map<string, CommitMessage[]> {
    const by = new Map<string, CommitMessage[]>();
    for (const c of this.commits.values()) {
      const list = by.get(c.block_hash);
      if (list) list.push(c);
      else by.set(c.block_hash, [c]);
    }
    return by;
  }
}

/** Per-round store of the current height: answers "prepared?" and "committed?". */
export class MessageStore {
  readonly #rounds = new Map<number, RoundMessages>();

  round(r: number): RoundMessages {
    let m = this.#rounds.get(r);
    if (m === undefined) {
      m = new RoundMessages();
      this.#rounds.set(r, m);
    }
    return m;
  }

  peek(r: number): RoundMessages | undefined {
    return this.#rounds.get(r);
  }

  rounds(): IterableIterator<[number, RoundMessages]> {
    return this.#rounds.entries();
  }

  /** Per author, the highest round above `round` it sent a ROUND_CHANGE for. */
  futureRoundChangeAuthors(round: number): Map<string, number> {
    const out = new Map<string, number>();
    for (const [r, m] of this.#rounds) {
      if (r <= round) continue;
      for (const author of m.roundChanges.keys()) out.set(author, Math.max(out.get(author) ?? 0, r));
    }
    return out;
  }

  /** Drops rounds below `round` except their COMMITs (a late COMMIT quorum still decides). */
  pruneBelow(round: number): void {
    for (const [r, m] of this.#rounds) {
      if (r < round) {
        m.prepares.clear();
        m.roundChanges.clear();
        m.proposal = null;
      }
    }
  }
}
