// Append-only write-ahead log of framed records: CRC32 (4 bytes, over length + payload),
// length (4 bytes, big-endian), payload. Every append is fsynced before it returns.
// On open the log is scanned; the first frame that is short or fails its CRC marks a torn
// write: the file is truncated there and that frame is never parsed.
import { closeSync, fsyncSync, ftruncateSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { crc32 } from 'node:zlib';

const HEADER = 8;
/** Upper bound on one frame's payload; a larger length field is treated as a torn frame. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

export interface WalOpenResult {
  wal: Wal;
  /** Payloads of the intact frames, in order. */
  records: Buffer[];
  /** Bytes cut from the tail (0 when the log was clean). */
  truncatedBytes: number;
}

export function encodeFrame(payload: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(HEADER + payload.length);
  frame.writeUInt32BE(payload.length, 4);
  payload.copy(frame, HEADER);
  frame.writeUInt32BE(crc32(frame.subarray(4)), 0);
  return frame;
}

/** Splits a buffer into intact frames; `validBytes` is where the first bad frame starts. */
export function decodeFrames(data: Buffer): { records: Buffer[]; validBytes: number } {
  const records: Buffer[] = [];
  let offset = 0;
  while (offset + HEADER <= data.length) {
    const length = data.readUInt32BE(offset + 4);
    if (length > MAX_FRAME_BYTES || offset + HEADER + length > data.length) break;
    const expected = data.readUInt32BE(offset);
    if (crc32(data.subarray(offset + 4, offset + HEADER + length)) !== expected) break;
    records.push(data.subarray(offset + HEADER, offset + HEADER + length));
    offset += HEADER + length;
  }
  return { records, validBytes: offset };
}

function fsyncDir(path: string): void {
  try {
    const fd = openSync(dirname(path), 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the file itself is synced.
  }
}

export class Wal {
  readonly path: string;
  private fd: number;
  private size: number;

  private constructor(path: string, fd: number, size: number) {
    this.path = path;
    this.fd = fd;
    this.size = size;
  }

  /** Opens (or creates) the log, truncating a torn tail. */
  static open(path: string): WalOpenResult {
    let data: Buffer;
    try {
      data = readFileSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      data = Buffer.alloc(0);
    }
    const { records, validBytes } = decodeFrames(data);
    const fd = openSync(path, 'a+');
    const truncatedBytes = data.length - validBytes;
    if (truncatedBytes > 0) {
      ftruncateSync(fd, validBytes);
      fsyncSync(fd);
    }
    fsyncDir(path);
    // Copy the payloads out so the file buffer can be released.
    return { wal: new Wal(path, fd, validBytes), records: records.map((r) => Buffer.from(r)), truncatedBytes };
  }

  get bytes(): number {
    return this.size;
  }

  /** Appends frames and fsyncs; returns only once they are durable. */
  append(...payloads: Buffer[]): void {
    const buf = payloads.length === 1 ? encodeFrame(payloads[0] as Buffer) : Buffer.concat(payloads.map(encodeFrame));
    let written = 0;
    while (written < buf.length) written += writeSync(this.fd, buf, written, buf.length - written);
    fsyncSync(this.fd);
    this.size += buf.length;
  }

  /** Atomically replaces the log with the given payloads (write temp, fsync, rename, fsync dir). */
  rewrite(payloads: Buffer[]): void {
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w');
    const buf = Buffer.concat(payloads.map(encodeFrame));
    let written = 0;
    while (written < buf.length) written += writeSync(fd, buf, written, buf.length - written);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.path);
    fsyncDir(this.path);
    closeSync(this.fd);
    this.fd = openSync(this.path, 'a+');
    this.size = buf.length;
  }

  close(): void {
    closeSync(this.fd);
  }
}
