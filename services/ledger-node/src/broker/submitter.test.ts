// Handing records to the node: TAMPERED first, at most the room the node has and SUBMIT_SLICE at once, waiting
// (and counting the wait) while there is no room, and ending when the watcher stops.
import { describe, expect, it } from 'vitest';
import type { ObservationRecord } from './record.ts';
import { SUBMIT_SLICE, type Submitted, Submitter, tamperedFirst } from './submitter.ts';

const rec = (id: string, verdict: 'OK' | 'TAMPERED') => ({ id, verdict }) as ObservationRecord;
const counts = (): Submitted => ({ submitted: { ok: 0, tampered: 0 }, waitedMs: 0 });

describe('tamperedFirst', () => {
  it('puts TAMPERED records first, each kind in its order; the same array when there is none', () => {
    const records = [rec('a', 'OK'), rec('b', 'TAMPERED'), rec('c', 'OK'), rec('d', 'TAMPERED')];
    expect(tamperedFirst(records).map((r) => r.id)).toEqual(['b', 'd', 'a', 'c']);
    const ok = [rec('a', 'OK')];
    expect(tamperedFirst(ok)).toBe(ok);
  });
});

describe('Submitter.offer', () => {
  it('hands over slices no larger than the room or SUBMIT_SLICE, and counts them by verdict', async () => {
    const slices: number[] = [];
    let room = 3;
    const submitter = new Submitter({
      ports: {
        submit: (r) => {
          slices.push(r.length);
          return r.length;
        },
        room: () => room,
      },
      now: () => 0,
      stopping: () => false,
    });
    const result = counts();
    await submitter.offer([rec('t', 'TAMPERED'), ...Array.from({ length: 4 }, (_, k) => rec(`${k}`, 'OK'))], result);
    expect(slices).toEqual([3, 2]);
    expect(result.submitted).toEqual({ ok: 4, tampered: 1 });
    room = Number.MAX_SAFE_INTEGER;
    slices.length = 0;
    await submitter.offer(
      Array.from({ length: SUBMIT_SLICE + 1 }, (_, k) => rec(`${k}`, 'OK')),
      counts(),
    );
    expect(slices).toEqual([SUBMIT_SLICE, 1]);
  });

  it('waits for room (roomChanged) and counts the wait; ends when the watcher stops', async () => {
    let now = 0;
    let room = 0;
    let stopping = false;
    const submitted: string[] = [];
    const submitter = new Submitter({
      ports: {
        submit: (r) => {
          submitted.push(...r.map((x) => x.id));
          return r.length;
        },
        room: () => room,
        roomChanged: async () => {
          now += 250;
          room = 1;
        },
      },
      now: () => now,
      stopping: () => stopping,
    });
    const result = counts();
    await submitter.offer([rec('a', 'OK')], result);
    expect(submitted).toEqual(['a']);
    expect(result.waitedMs).toBe(250);
    stopping = true;
    await submitter.offer([rec('b', 'OK')], result);
    expect(submitted).toEqual(['a']);
  });
});
