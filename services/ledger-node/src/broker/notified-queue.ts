// The entities notifications announced and the watcher has not judged yet, per broker: a bounded set in arrival
// order. An entity announced again while it waits is one entry (a burst of changes to one entity costs one
// judgement: its current value is read when it is judged). Past `maxEntities` in all, further announcements are
// dropped and the broker is marked overflowed: the watcher then sweeps it, so a flood costs a full read, never a
// lost change, and never more memory than the bound.
import type { EntityRef } from './notification.ts';
import { entityKey } from './observe.ts';

export interface PendingEntity {
  ref: EntityRef;
  /** When the first announcement of it arrived (ms). */
  at: number;
  /** Not judged before (a change on the primary waits for federation to copy it). */
  due: number;
}

export class NotifiedQueue {
  private readonly byBroker = new Map<string, Map<string, PendingEntity>>();
  private readonly overflow = new Set<string>();
  private count = 0;
  readonly maxEntities: number;

  constructor(maxEntities = 100_000) {
    this.maxEntities = maxEntities;
  }

  /** Adds what one notification of `broker` announced; how many were new, and whether some did not fit. */
  add(broker: string, refs: readonly EntityRef[], now: number, due: number): { added: number; dropped: number } {
    let pending = this.byBroker.get(broker);
    if (!pending) {
      pending = new Map();
      this.byBroker.set(broker, pending);
    }
    let added = 0;
    let dropped = 0;
    for (const ref of refs) {
      const key = entityKey(ref.type, ref.id);
      if (pending.has(key)) continue;
      if (this.count >= this.maxEntities) {
        dropped++;
        continue;
      }
      pending.set(key, { ref, at: now, due });
      this.count++;
      added++;
    }
    if (dropped > 0) this.overflow.add(broker);
    return { added, dropped };
  }

  /** Up to `max` entities of `broker` that are due, removed from the queue, in arrival order. */
  take(broker: string, max: number, now: number): PendingEntity[] {
    const pending = this.byBroker.get(broker);
    const out: PendingEntity[] = [];
    if (!pending) return out;
    for (const [key, p] of pending) {
      if (out.length >= max) break;
      if (p.due > now) continue;
      pending.delete(key);
      out.push(p);
    }
    this.count -= out.length;
    return out;
  }

  /** When the next entity of any broker is due (undefined: none waits). */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const pending of this.byBroker.values())
      for (const p of pending.values()) if (next === undefined || p.due < next) next = p.due;
    return next;
  }

  /** Whether this entity of `broker` waits to be judged. */
  has(broker: string, type: string, id: string): boolean {
    return this.byBroker.get(broker)?.has(entityKey(type, id)) ?? false;
  }

  /** Brokers that dropped announcements since the last call (each reported once). */
  takeOverflowed(): string[] {
    const out = [...this.overflow];
    this.overflow.clear();
    return out;
  }

  get size(): number {
    return this.count;
  }
}
