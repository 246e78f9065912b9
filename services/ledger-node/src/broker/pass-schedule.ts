// When passes (sweeps) run: the first at once, each later one at this node's place in the interval (`nextPassAt`:
// the validators spread theirs over it), one sooner when a node catching up skipped one, and a full sweep early
// when something may have changed unannounced (a subscription made again, notifications overflowed). Also which
// kind a sweep is (`sweepKind`: full, or incremental every time but every FULL_SWEEP_EVERY-th). The pass itself
// is the sweep's (sweep.ts); this only decides when and what.
import type { Now, WatcherPorts, WatchLog } from './ports.ts';
import type { PassResult } from './status.ts';

/** Subscribe mode: every this many sweeps, one reads everything (deletions included). */
export const FULL_SWEEP_EVERY = 6;
/** A sweep asked for early (a subscription made again, a notification overflow) waits at least this long. */
export const EARLY_SWEEP_MIN_GAP_MS = 5000;
/** A pass (or the judging of notified entities) that found the node catching up tries again this soon. */
export const NOT_SYNCED_RETRY_MS = 1000;

/**
 * When the next pass starts: the first start of this node's slot (`phase` of the interval after each multiple of
 * the interval on the clock) at or after `now`. The validators' passes thus keep their places in the interval
 * whatever their start times and pass durations: with n of them at phases 0, 1/n, …, a change waits at most
 * interval/n for a pass to begin, not up to a whole interval.
 * @example nextPassAt(12_300, 10_000, 0.25) // 12_500
 */
export function nextPassAt(now: number, intervalMs: number, phase: number): number {
  const offset = Math.floor(Math.min(Math.max(phase, 0), 1) * intervalMs) % intervalMs;
  const base = now - offset;
  const slot = Math.ceil(base / intervalMs) * intervalMs;
  return slot + offset;
}

/** What decides a sweep's kind, besides the brokers (sweepKind's `incrementalReady`). */
export interface SweepState {
  /** Subscribe mode (poll mode's passes are always full). */
  subscribe: boolean;
  /** A full sweep was asked for (a subscription made again, notifications overflowed). */
  fullSweepWanted: boolean;
  /** Sweeps since the last full one. */
  sweepsSinceFull: number;
}

/**
 * What a sweep reads: what it was asked for; in poll mode, or when a full sweep is wanted, everything; else what
 * was modified since the last, except every FULL_SWEEP_EVERY-th sweep (deletions show only in a full one), and
 * unless some broker cannot be read so (`incrementalReady`, asked last: every broker read before, none refusing
 * an incremental read, and each read completely once).
 * @example sweepKind(undefined, { subscribe: true, fullSweepWanted: false, sweepsSinceFull: 1 }, () => true) // 'incremental'
 */
export function sweepKind(
  asked: 'full' | 'incremental' | undefined,
  state: SweepState,
  incrementalReady: () => boolean,
): 'full' | 'incremental' {
  if (asked) return asked;
  if (!state.subscribe || state.fullSweepWanted) return 'full';
  if (state.sweepsSinceFull + 1 >= FULL_SWEEP_EVERY) return 'full';
  return incrementalReady() ? 'incremental' : 'full';
}

export interface PassSchedulerDeps {
  /** The poll interval, or (subscribe mode) the sweep interval. */
  intervalMs: number;
  subscribe: boolean;
  ports: Pick<WatcherPorts, 'phase'>;
  now: Now;
  log: WatchLog | undefined;
  /** Runs one pass (or joins the one running). */
  pass(): Promise<PassResult>;
  /** Whether a pass is running. */
  busy(): boolean;
}

export class PassScheduler {
  private readonly deps: PassSchedulerDeps;
  private timer: NodeJS.Timeout | undefined;
  private nextAt: number | undefined;
  private stopped = true;
  private fullSweepWanted = false;
  private sweepsSinceFull = 0;
  private lastEarlySweep = 0;

  constructor(deps: PassSchedulerDeps) {
    this.deps = deps;
  }

  /** When the next pass is due (undefined before the first is scheduled). */
  get nextPassAt(): number | undefined {
    return this.nextAt;
  }

  /** Passes every interval, each at this node's place in it; the first at once. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** No more passes (the one in progress, if any, ends on its own). */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** The kind of the sweep about to run (sweepKind). */
  kind(asked: 'full' | 'incremental' | undefined, incrementalReady: () => boolean): 'full' | 'incremental' {
    const { fullSweepWanted, sweepsSinceFull } = this;
    return sweepKind(asked, { subscribe: this.deps.subscribe, fullSweepWanted, sweepsSinceFull }, incrementalReady);
  }

  /** A sweep of this kind begins (a full one is what a wanted full sweep asked for). */
  began(kind: 'full' | 'incremental'): void {
    if (kind === 'full') this.fullSweepWanted = false;
  }

  /** A sweep that read the primary ended. */
  ended(kind: 'full' | 'incremental'): void {
    this.sweepsSinceFull = kind === 'full' ? 0 : this.sweepsSinceFull + 1;
  }

  /** A full sweep soon (subscribe mode): something may have changed unannounced. */
  sweepSoon(why: string): void {
    const { now, log } = this.deps;
    this.fullSweepWanted = true;
    if (this.stopped || this.deps.busy()) return;
    const at = Math.max(now(), this.lastEarlySweep + EARLY_SWEEP_MIN_GAP_MS);
    if (this.nextAt !== undefined && this.nextAt <= at) return;
    this.lastEarlySweep = at;
    log?.info({ why }, 'broker watcher: sweeping early');
    this.schedule(at - now());
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    const { intervalMs, now, log, ports } = this.deps;
    if (this.timer) clearTimeout(this.timer);
    this.nextAt = now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const untilNextSlot = () => {
        let phase = 0;
        try {
          phase = ports.phase?.() ?? 0;
        } catch (err) {
          log?.warn({ err }, 'broker watcher: no phase; the next pass starts at the top of the interval');
        }
        const t = now();
        return nextPassAt(t, intervalMs, phase) - t;
      };
      this.deps
        .pass()
        .then(
          (r) => (r.skipped ? Math.min(NOT_SYNCED_RETRY_MS, intervalMs) : untilNextSlot()),
          (err: unknown) => {
            log?.error({ err }, 'broker watcher: pass failed');
            return untilNextSlot();
          },
        )
        .then((next) => {
          if (!this.timer) this.schedule(next);
        });
    }, delayMs);
  }
}
