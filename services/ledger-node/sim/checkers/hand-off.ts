import type { Block } from '@scriptorium/ledger-protocol';

/**
 * Notifications hand-off: a node's finalized-block listeners (the broker memory, the tamper notifier) get every
 * block the node appends exactly once, in height order, and only once it is stored: the first after a (re)start
 * is the one above what its disk held, each next one the height after the last, and each is the block stored
 * at its height. Feed it every boot and every hand-off of the honest nodes.
 */
export class HandOffChecker {
  readonly #last = new Map<string, number>();
  readonly errors: string[] = [];

  boot(node: string, height: number): void {
    this.#last.set(node, height);
  }

  observe(node: string, block: Block, stored: readonly Block[]): void {
    const h = block.header.height;
    const last = this.#last.get(node) ?? 0;
    if (h !== last + 1) this.errors.push(`${node} handed block ${h} to its listeners after block ${last}`);
    if (stored[h] !== block) this.errors.push(`${node} handed block ${h} to its listeners before storing it`);
    this.#last.set(node, Math.max(last, h));
  }

  /** Every node handed off every block it stored: the last hand-off is its tip. */
  finish(tips: ReadonlyMap<string, number>): string[] {
    const errors = [...this.errors];
    for (const [node, tip] of tips) {
      const last = this.#last.get(node) ?? 0;
      if (last < tip) errors.push(`${node} stored blocks up to ${tip} but handed its listeners only up to ${last}`);
    }
    return errors;
  }
}
