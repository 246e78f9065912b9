// Handing records to the node (backpressure): at most what the node's window has room for and SUBMIT_SLICE at a
// time, waiting for room when there is none (a block finalized, or a short while), yielding between slices so the
// node keeps answering consensus messages; TAMPERED records first. A pass and the judging of notified entities
// both hand theirs over here, and count what they handed and how long they waited.
import type { Now, Stopping, WatcherPorts } from './ports.ts';
import type { ObservationRecord } from './record.ts';
import type { PassResult } from './status.ts';

/** Records handed to the mempool at once. */
export const SUBMIT_SLICE = 2000;
/** How often a pass waiting for room asks again, when the node does not say. */
const ROOM_POLL_MS = 50;

/** What a hand-over counts: the records handed, by verdict, and the time spent waiting for room. */
export type Submitted = Pick<PassResult, 'submitted' | 'waitedMs'>;

/**
 * The records, TAMPERED before OK (each in its order); the same array when none is TAMPERED.
 * @example tamperedFirst([ok1, bad, ok2]) // [bad, ok1, ok2]
 */
export function tamperedFirst(records: ObservationRecord[]): ObservationRecord[] {
  const tampered = records.filter((r) => r.verdict === 'TAMPERED');
  return tampered.length === 0 ? records : [...tampered, ...records.filter((r) => r.verdict !== 'TAMPERED')];
}

export interface SubmitterDeps {
  ports: Pick<WatcherPorts, 'submit' | 'room' | 'roomChanged'>;
  now: Now;
  stopping: Stopping;
}

export class Submitter {
  private readonly deps: SubmitterDeps;

  constructor(deps: SubmitterDeps) {
    this.deps = deps;
  }

  /** Hands records to the node as the mempool makes room for them; stops when the watcher stops. */
  async offer(records: readonly ObservationRecord[], result: Submitted): Promise<void> {
    const { ports, now, stopping } = this.deps;
    for (let i = 0; i < records.length && !stopping(); ) {
      const room = ports.room();
      if (room <= 0) {
        const t = now();
        await (ports.roomChanged?.() ?? new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS)));
        result.waitedMs += now() - t;
        continue;
      }
      const slice = records.slice(i, i + Math.min(room, SUBMIT_SLICE));
      ports.submit(slice);
      for (const r of slice) {
        if (r.verdict === 'TAMPERED') result.submitted.tampered++;
        else result.submitted.ok++;
      }
      i += slice.length;
      // Yield between slices: the node keeps answering consensus messages meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
