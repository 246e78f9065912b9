// The durable delivery queue: every (sink, event) pair waiting for delivery survives kill -9. It is
// a framed, fsynced log (storage/wal.ts) of `add` and `done` entries, plus the height up to which
// finalized blocks were turned into notifications (`cursor`). On open the log is replayed: pending
// = added and not done. It is compacted to the pending entries once it has grown and most of it is
// done.
import { join } from 'node:path';
import { Wal } from '../storage/wal.ts';
import type { TamperEvent } from './event.ts';

export interface QueueItem {
  /** `<sink>\u0000<event id>`: one delivery. */
  key: string;
  sink: string;
  event: TamperEvent;
  /** Not to be delivered before this time (ms since the epoch). */
  notBefore: number;
  /** Validators (public keys) to ask first whether they delivered it; empty: deliver at once. */
  askFirst: string[];
}

type Entry =
  | { op: 'add'; item: QueueItem }
  /** `delivered`: this node delivered it (false: it found another node had). */
  | { op: 'done'; key: string; delivered?: boolean }
  | { op: 'cursor'; height: number };

/** How many delivered keys a node remembers, to answer "did you deliver it?" to its backups. */
const DELIVERED_MEMORY = 100_000;

const COMPACT_BYTES = 8 * 1024 * 1024;

export const deliveryKey = (sink: string, eventId: string): string => `${sink}\u0000${eventId}`;

export class DeliveryQueue {
  private readonly wal: Wal;
  private readonly items = new Map<string, QueueItem>();
  private readonly deliveredKeys = new Set<string>();
  private cursorHeight: number;
  private compactedBytes = 0;

  private constructor(wal: Wal, items: QueueItem[], cursor: number, delivered: Iterable<string>) {
    this.wal = wal;
    for (const i of items) this.items.set(i.key, i);
    for (const k of delivered) this.remember(k);
    this.cursorHeight = cursor;
  }

  private remember(key: string): void {
    this.deliveredKeys.add(key);
    if (this.deliveredKeys.size > DELIVERED_MEMORY) {
      const oldest = this.deliveredKeys.values().next().value;
      if (oldest !== undefined) this.deliveredKeys.delete(oldest);
    }
  }

  /** True when this node delivered that (sink, event) (within the last DELIVERED_MEMORY deliveries). */
  wasDelivered(key: string): boolean {
    return this.deliveredKeys.has(key);
  }

  /** Opens (or creates) `<dir>/notify-queue.wal`. */
  static open(dir: string, name = 'notify-queue.wal'): DeliveryQueue {
    const { wal, records } = Wal.open(join(dir, name));
    const items = new Map<string, QueueItem>();
    const delivered: string[] = [];
    let cursor = -1;
    for (const payload of records) {
      const e = JSON.parse(payload.toString('utf8')) as Entry;
      if (e.op === 'add') items.set(e.item.key, e.item);
      else if (e.op === 'done') {
        items.delete(e.key);
        if (e.delivered) delivered.push(e.key);
      } else cursor = Math.max(cursor, e.height);
    }
    return new DeliveryQueue(wal, [...items.values()], cursor, delivered.slice(-DELIVERED_MEMORY));
  }

  /** Height of the last finalized block already turned into notifications (-1: none). */
  get cursor(): number {
    return this.cursorHeight;
  }

  get size(): number {
    return this.items.size;
  }

  pending(): QueueItem[] {
    return [...this.items.values()];
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  /** Durably adds deliveries and (optionally) moves the cursor, in one fsync. */
  add(items: readonly QueueItem[], cursor?: number): void {
    const fresh = items.filter((i) => !this.items.has(i.key));
    const entries: Entry[] = fresh.map((item) => ({ op: 'add', item }));
    if (cursor !== undefined && cursor > this.cursorHeight) entries.push({ op: 'cursor', height: cursor });
    if (entries.length === 0) return;
    this.wal.append(...entries.map((e) => Buffer.from(JSON.stringify(e), 'utf8')));
    for (const i of fresh) this.items.set(i.key, i);
    if (cursor !== undefined && cursor > this.cursorHeight) this.cursorHeight = cursor;
  }

  /** Durably marks a delivery done: delivered by this node, or (delivered false) found delivered by another. */
  done(key: string, delivered = true): void {
    if (!this.items.has(key)) return;
    this.wal.append(Buffer.from(JSON.stringify({ op: 'done', key, delivered } satisfies Entry), 'utf8'));
    this.items.delete(key);
    if (delivered) this.remember(key);
    // Compact once the log has doubled since the last compaction (and is worth it).
    if (this.wal.bytes > Math.max(COMPACT_BYTES, 2 * this.compactedBytes)) this.compact();
  }

  private compact(): void {
    const entries: Entry[] = [...this.items.values()].map((item) => ({ op: 'add', item }));
    for (const key of this.deliveredKeys) entries.push({ op: 'done', key, delivered: true });
    entries.push({ op: 'cursor', height: this.cursorHeight });
    this.wal.rewrite(entries.map((e) => Buffer.from(JSON.stringify(e), 'utf8')));
    this.compactedBytes = this.wal.bytes;
  }

  close(): void {
    this.wal.close();
  }
}
