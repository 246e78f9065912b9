import { type ConsensusMessage, signedFields } from '@scriptorium/ledger-protocol';

/**
 * No-equivocation: an honest key never signs two different messages of one type for one height and
 * round, across crashes and restarts (the persistence rule). Feed it every message honest nodes send.
 */
export class EquivocationChecker {
  readonly #seen = new Map<string, string>();
  readonly errors: string[] = [];

  observe(node: string, msg: ConsensusMessage): void {
    const key = `${msg.author}|${msg.height}|${msg.round}|${msg.type}`;
    const body = JSON.stringify(signedFields(msg));
    const before = this.#seen.get(key);
    if (before === undefined) this.#seen.set(key, body);
    else if (before !== body) {
      this.errors.push(`${node} signed two different ${msg.type} for height ${msg.height} round ${msg.round}`);
    }
  }
}
