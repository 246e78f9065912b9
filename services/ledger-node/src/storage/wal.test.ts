import {
  appendFileSync,
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlockStore } from './block-store.ts';
import { StateStore } from './state-store.ts';
import { decodeFrames, encodeFrame, scanFrames, Wal } from './wal.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-wal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const payloads = ['one', 'two', 'three'].map((s) => Buffer.from(s));

describe('wal', () => {
  it('round-trips appended frames across reopen', () => {
    const path = join(dir, 'a.wal');
    const { wal } = Wal.open(path);
    wal.append(...payloads);
    wal.close();
    const { records, truncatedBytes, wal: again } = Wal.open(path);
    again.close();
    expect(records.map((r) => r.toString())).toEqual(['one', 'two', 'three']);
    expect(truncatedBytes).toBe(0);
  });

  it('truncates a torn last record at every cut point and never parses it', () => {
    const full = Buffer.concat(payloads.map(encodeFrame));
    const lastStart = full.length - encodeFrame(payloads[2] as Buffer).length;
    for (let cut = lastStart; cut < full.length; cut++) {
      const path = join(dir, `cut-${cut}.wal`);
      writeFileSync(path, full.subarray(0, cut));
      const { wal, records, truncatedBytes } = Wal.open(path);
      expect(records.map((r) => r.toString())).toEqual(['one', 'two']);
      expect(truncatedBytes).toBe(cut - lastStart);
      expect(statSync(path).size).toBe(lastStart);
      // The log stays usable: a new append lands right after the intact frames.
      wal.append(Buffer.from('four'));
      wal.close();
      expect(Wal.open(path).records.map((r) => r.toString())).toEqual(['one', 'two', 'four']);
    }
  });

  it('detects a corrupted byte through the CRC', () => {
    const path = join(dir, 'flip.wal');
    const full = Buffer.concat(payloads.map(encodeFrame));
    full[full.length - 1] = (full[full.length - 1] as number) ^ 0xff;
    writeFileSync(path, full);
    const { records, wal } = Wal.open(path);
    wal.close();
    expect(records).toHaveLength(2);
  });

  it('rejects an absurd length field without allocating it', () => {
    const frame = Buffer.alloc(8);
    frame.writeUInt32BE(0xffffffff, 4);
    expect(decodeFrames(Buffer.concat([encodeFrame(Buffer.from('ok')), frame])).records).toHaveLength(1);
  });

  it('never yields a payload that was not written, for arbitrary truncation and garbage tails', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 8 }),
        fc.nat(),
        fc.uint8Array({ maxLength: 32 }),
        (items, cutSeed, garbage) => {
          const frames = items.map((p) => encodeFrame(Buffer.from(p)));
          const full = Buffer.concat(frames);
          const cut = full.length === 0 ? 0 : cutSeed % (full.length + 1);
          const { records } = decodeFrames(Buffer.concat([full.subarray(0, cut), Buffer.from(garbage)]));
          // Every decoded record is a prefix of what was written, in order.
          for (let i = 0; i < records.length && i < items.length; i++) {
            if (i < frames.length && Buffer.concat(frames.slice(0, i + 1)).length <= cut)
              expect(Buffer.compare(records[i] as Buffer, Buffer.from(items[i] as Uint8Array))).toBe(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('wal scan (chunked, for large logs)', () => {
  it('yields exactly what decodeFrames yields, whatever the chunk size, for truncated and garbage tails', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 8 }),
        fc.nat(),
        fc.uint8Array({ maxLength: 24 }),
        fc.integer({ min: 1, max: 64 }),
        (items, cutSeed, garbage, chunk) => {
          const full = Buffer.concat(items.map((p) => encodeFrame(Buffer.from(p))));
          const cut = full.length === 0 ? 0 : cutSeed % (full.length + 1);
          const data = Buffer.concat([full.subarray(0, cut), Buffer.from(garbage)]);
          const path = join(dir, 'scan.wal');
          writeFileSync(path, data);
          const fd = openSync(path, 'r');
          const seen: Array<{ payload: string; offset: number }> = [];
          const valid = scanFrames(
            fd,
            data.length,
            (p, offset) => seen.push({ payload: p.toString('hex'), offset }),
            chunk,
          );
          closeSync(fd);
          const expected = decodeFrames(data);
          expect(valid).toBe(expected.validBytes);
          expect(seen.map((f) => f.payload)).toEqual(expected.records.map((r) => r.toString('hex')));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a frame back by the offset append returned, checking its CRC again', () => {
    const path = join(dir, 'at.wal');
    const { wal } = Wal.open(path);
    const first = wal.append(Buffer.from('alpha'));
    const second = wal.append(Buffer.from('beta'));
    expect(wal.readAt(first)?.toString()).toBe('alpha');
    expect(wal.readAt(second)?.toString()).toBe('beta');
    expect(wal.readAt(second + 1)).toBeUndefined();
    wal.close();
    const bytes = readFileSync(path);
    bytes[second + 9] = (bytes[second + 9] as number) ^ 0x01; // a flipped bit in "beta"
    writeFileSync(path, bytes);
    const scanned: string[] = [];
    const { wal: again } = Wal.scan(path, (p) => scanned.push(p.toString()));
    expect(scanned).toEqual(['alpha']); // the bad frame is the torn tail now, cut off
    expect(again.readAt(second)).toBeUndefined();
    again.close();
  });
});

describe('state store', () => {
  it('returns the last durable state after a torn write', () => {
    const store = StateStore.open<{ round: number }>(dir);
    store.save({ round: 1 });
    store.save({ round: 2 });
    store.close();
    appendFileSync(join(dir, 'consensus-state.wal'), encodeFrame(Buffer.from('{"round":3}')).subarray(0, 10));
    const again = StateStore.open<{ round: number }>(dir);
    expect(again.load()).toEqual({ round: 2 });
    again.close();
  });
});

describe('block store', () => {
  it('reloads blocks in order and drops a torn tail', () => {
    const { store } = BlockStore.open<{ n: number }>(dir);
    store.append(0, { n: 0 });
    store.append(1, { n: 1 });
    store.close();
    const path = join(dir, 'blocks.wal');
    const size = statSync(path).size;
    appendFileSync(path, encodeFrame(Buffer.from(JSON.stringify({ height: 2, block: { n: 2 } }))));
    truncateSync(path, statSync(path).size - 3);
    const { store: again, truncatedBytes } = BlockStore.open<{ n: number }>(dir);
    expect(again.length).toBe(2);
    expect(truncatedBytes).toBeGreaterThan(0);
    expect(readFileSync(path).length).toBe(size);
    expect(() => again.append(5, { n: 5 })).toThrow();
    again.close();
  });

  it('keeps only a bounded cache of blocks in memory and reads the others back from the file', () => {
    const { store } = BlockStore.open<{ n: number; pad: string }>(dir, { blocks: 4, bytes: 1 << 20 });
    for (let h = 0; h < 50; h++) store.append(h, { n: h, pad: 'x'.repeat(100) });
    expect(store.cachedBlocks).toBe(4);
    expect(store.get(3)).toEqual({ n: 3, pad: 'x'.repeat(100) });
    expect(store.getJson(7)).toBe(JSON.stringify({ n: 7, pad: 'x'.repeat(100) }));
    expect(store.cachedBlocks).toBe(4);
    store.close();
    // Reopened: nothing is parsed until asked for; every height reads back.
    const { store: again } = BlockStore.open<{ n: number; pad: string }>(dir, { blocks: 2, bytes: 250 });
    expect(again.length).toBe(50);
    expect(again.cachedBlocks).toBe(0);
    for (let h = 49; h >= 0; h--) expect(again.get(h)?.n).toBe(h);
    expect(again.cachedBlocks).toBe(1); // the byte limit (250) holds one 130-byte block besides the newest
    expect(again.get(50)).toBeUndefined();
    expect(again.getJson(-1)).toBeUndefined();
    again.close();
  });

  it('refuses a log whose heights are out of order', () => {
    writeFileSync(
      join(dir, 'blocks.wal'),
      Buffer.concat([0, 2].map((h) => encodeFrame(Buffer.from(JSON.stringify({ height: h, block: {} }))))),
    );
    expect(() => BlockStore.open(dir)).toThrow(/expected height 1, found 2/);
  });
});
