// Missed changes (subscribe mode): what a sweep finds changed that no notification announced. Such a change is a
// suspect until its grace ends (brokers notify after answering the write, so a sweep can read a change before its
// notification arrives): a notification about it then clears it, else it is counted missed, per broker
// (scriptorium_ledger_missed_changes_total, /watch's missedChanges). An announcement the full notified queue
// dropped is not missed (the node chose to sweep for it): those are remembered until a pass has read them.
// Both sets are bounded (MAX_SUSPECTS).
import type { Now, Stopping, WatcherMetrics } from './ports.ts';

/**
 * A change a sweep found unannounced is counted missed only if no notification about it arrives this long after:
 * brokers notify after answering the write, so a sweep may read a change before its notification reaches the node.
 */
export const MISSED_GRACE_MS = 5000;
/** Suspected missed changes, and overflowed announcements, held at most (~100 bytes each). */
export const MAX_SUSPECTS = 100_000;

/** The key of an entity of a broker in the sets below (the broker's URL, a newline, the entity's id). */
export const brokerEntityKey = (broker: string, id: string): string => `${broker}\n${id}`;

export interface MissedChangesDeps {
  now: Now;
  /** How long a suspect waits for its notification (MISSED_GRACE_MS unless the options say otherwise). */
  graceMs: number;
  metrics: WatcherMetrics | undefined;
  stopping: Stopping;
  /** Whether a notification about this entity waits or is being judged (`key`: brokerEntityKey). */
  announced(broker: string, type: string, id: string, key: string): boolean;
  /** A change a sweep found on `broker` at `foundAt` was counted missed (its subscription may be silent). */
  onMissed?: (broker: string, foundAt: number) => void;
}

export class MissedChanges {
  private readonly deps: MissedChangesDeps;
  /** Announcements the full queue dropped, by key, when: the sweep the overflow asks for judges them. */
  private readonly overflowed = new Map<string, number>();
  /** Changes a sweep found unannounced, by key, until their grace tells whether a notification came. */
  private readonly suspects = new Map<string, { broker: string; until: number }>();
  private readonly byBroker = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(deps: MissedChangesDeps) {
    this.deps = deps;
  }

  /**
   * A change a sweep found on `broker`: unless a notification about it waits, is being judged or was dropped by
   * the full queue, it becomes a suspect (true: the pass counts it among its missed changes).
   */
  found(broker: string, type: string, id: string): boolean {
    const { now, graceMs } = this.deps;
    const key = brokerEntityKey(broker, id);
    if (this.deps.announced(broker, type, id, key) || this.overflowed.has(key)) return false;
    if (this.suspects.size >= MAX_SUSPECTS) this.countSuspects(Number.POSITIVE_INFINITY);
    this.suspects.set(key, { broker, until: now() + graceMs });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.countSuspects(now());
    }, graceMs + 100);
    return true;
  }

  /** A notification named this entity: not missed. */
  notified(broker: string, id: string): void {
    this.suspects.delete(brokerEntityKey(broker, id));
  }

  /** The full queue dropped an announcement of this entity at `at` (kept while fewer than MAX_SUSPECTS are). */
  overflow(broker: string, id: string, at: number): void {
    if (this.overflowed.size < MAX_SUSPECTS) this.overflowed.set(brokerEntityKey(broker, id), at);
  }

  /** A pass that began at `startedAt` read the brokers: what overflowed before it, it has read. */
  passRead(startedAt: number): void {
    for (const [key, at] of this.overflowed) if (at < startedAt) this.overflowed.delete(key);
  }

  /** Changes still within their grace. */
  get suspected(): number {
    return this.suspects.size;
  }

  /** Changes counted missed on `broker`. */
  missedOn(broker: string): number {
    return this.byBroker.get(broker) ?? 0;
  }

  /** Changes counted missed on every broker. */
  get missed(): number {
    let n = 0;
    for (const m of this.byBroker.values()) n += m;
    return n;
  }

  /** Stops the grace timer. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    // Forgotten too, or a start after a stop would never arm it again (`??=` in found()).
    this.timer = undefined;
  }

  /** Counts as missed the suspects whose grace ended by `now` (and looks again later for the others). */
  private countSuspects(now: number): void {
    for (const [key, s] of this.suspects) {
      if (s.until > now) continue;
      this.suspects.delete(key);
      this.byBroker.set(s.broker, (this.byBroker.get(s.broker) ?? 0) + 1);
      this.deps.metrics?.missedChanges.inc({ broker: s.broker });
      this.deps.onMissed?.(s.broker, s.until - this.deps.graceMs);
    }
    if (this.suspects.size > 0 && !this.timer && !this.deps.stopping())
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.countSuspects(this.deps.now());
      }, this.deps.graceMs);
  }
}
