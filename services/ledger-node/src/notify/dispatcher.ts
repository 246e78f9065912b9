// Delivers queued notifications at least once: each due item goes to its sink; success marks it
// done (durably), failure schedules another attempt with exponential backoff and full jitter
// (random(0, min(cap, base × 2^attempt)); by default 1 s base, 5 min cap), without end: an
// unreachable receiver gets the event when it comes back. One delivery at a time per sink, oldest
// first. Items with validators to ask first (a takeover) ask `alreadyDelivered` before delivering.
import { fullJitterDelay } from '@scriptorium/backoff';
import type { DeliveryQueue, QueueItem } from './queue.ts';
import type { Sink } from './sink.ts';

export interface DispatcherOptions {
  queue: DeliveryQueue;
  sinks: readonly Sink[];
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  now?: () => number;
  random?: () => number;
  /** For items with `askFirst`: true when one of those validators already delivered the event to this sink. */
  alreadyDelivered?: (item: QueueItem) => Promise<boolean>;
  onDelivered?: (item: QueueItem, attempts: number) => void;
  onFailed?: (item: QueueItem, error: Error, attempts: number) => void;
  onSkipped?: (item: QueueItem) => void;
}

interface Attempts {
  count: number;
  nextAt: number;
}

export class Dispatcher {
  private readonly options: DispatcherOptions;
  private readonly sinks = new Map<string, Sink>();
  private readonly attempts = new Map<string, Attempts>();
  private readonly busy = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly now: () => number;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(options: DispatcherOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    for (const s of options.sinks) this.sinks.set(s.name, s);
  }

  get sinkNames(): string[] {
    return [...this.sinks.keys()];
  }

  start(): void {
    this.running = true;
    this.kick();
  }

  /** Looks for due work now (call after adding to the queue). */
  kick(): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const wait = this.pump();
    if (wait !== undefined) this.timer = setTimeout(() => this.kick(), Math.max(10, Math.min(wait, 60_000)));
  }

  /** Starts every due delivery; returns ms until the next one is due (undefined: nothing queued). */
  private pump(): number | undefined {
    const now = this.now();
    let next: number | undefined;
    const items = this.options.queue.pending().sort((a, b) => a.notBefore - b.notBefore);
    for (const item of items) {
      const due = Math.max(item.notBefore, this.attempts.get(item.key)?.nextAt ?? 0);
      if (due > now) {
        next = next === undefined ? due - now : Math.min(next, due - now);
        continue;
      }
      if (this.busy.has(item.sink)) continue;
      const sink = this.sinks.get(item.sink);
      if (!sink) continue; // a sink no longer configured: its items wait until it is again
      this.busy.add(item.sink);
      const p = this.deliver(sink, item).finally(() => {
        this.busy.delete(item.sink);
        this.inFlight.delete(p);
        this.kick();
      });
      this.inFlight.add(p);
    }
    return next;
  }

  private async deliver(sink: Sink, item: QueueItem): Promise<void> {
    const a = this.attempts.get(item.key) ?? { count: 0, nextAt: 0 };
    try {
      if (item.askFirst.length > 0 && this.options.alreadyDelivered && (await this.options.alreadyDelivered(item))) {
        this.options.queue.done(item.key, false);
        this.attempts.delete(item.key);
        this.options.onSkipped?.(item);
        return;
      }
      await sink.deliver(item.event);
      this.options.queue.done(item.key);
      this.attempts.delete(item.key);
      this.options.onDelivered?.(item, a.count + 1);
    } catch (err) {
      a.count++;
      a.nextAt =
        this.now() +
        fullJitterDelay(
          a.count - 1,
          this.options.backoffBaseMs ?? 1000,
          this.options.backoffMaxMs ?? 300_000,
          this.options.random ?? Math.random,
        );
      this.attempts.set(item.key, a);
      this.options.onFailed?.(item, err as Error, a.count);
    }
  }

  /** Stops scheduling and waits for deliveries in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }
}
