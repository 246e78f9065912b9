import type { SimClock } from './clock.ts';
import type { Prng } from './prng.ts';

/** Current network conditions; the simulator changes them between phases. */
export interface NetworkConditions {
  loss: number;
  duplicate: number;
  minDelayMs: number;
  maxDelayMs: number;
  /** Node ids grouped in partitions; null = fully connected. Nodes in different groups cannot talk. */
  partition: number[][] | null;
}

export const HEALED: NetworkConditions = { loss: 0, duplicate: 0, minDelayMs: 1, maxDelayMs: 10, partition: null };

/**
 * Message delivery with loss, duplication, reordering (random per-message delay) and partitions.
 * Delivery is decided at send time for loss and partition, and again at arrival for partitions.
 */
export class SimNetwork<P> {
  conditions: NetworkConditions = HEALED;
  sent = 0;
  delivered = 0;
  /** Extra, targeted fault: return true to drop a message (e.g. every COMMIT to some nodes). */
  dropIf: ((from: number, to: number, payload: P) => boolean) | null = null;
  readonly #clock: SimClock;
  readonly #rng: Prng;
  readonly #deliver: (to: number, from: number, payload: P) => void;

  constructor(clock: SimClock, rng: Prng, deliver: (to: number, from: number, payload: P) => void) {
    this.#clock = clock;
    this.#rng = rng;
    this.#deliver = deliver;
  }

  connected(a: number, b: number): boolean {
    const p = this.conditions.partition;
    if (p === null) return true;
    const ga = p.findIndex((g) => g.includes(a));
    return ga !== -1 && ga === p.findIndex((g) => g.includes(b));
  }

  send(from: number, to: number, payload: P): void {
    this.sent++;
    if (!this.connected(from, to) || this.#rng.chance(this.conditions.loss)) return;
    if (this.dropIf?.(from, to, payload)) return;
    const copies = this.#rng.chance(this.conditions.duplicate) ? 2 : 1;
    for (let i = 0; i < copies; i++) {
      const { minDelayMs, maxDelayMs } = this.conditions;
      this.#clock.schedule(this.#rng.int(minDelayMs, maxDelayMs), () => {
        if (!this.connected(from, to)) return;
        this.delivered++;
        this.#deliver(to, from, payload);
      });
    }
  }
}
