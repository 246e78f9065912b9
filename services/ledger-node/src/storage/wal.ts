// Append-only write-ahead log of framed records: CRC32 (4 bytes, over length + payload),
// length (4 bytes, big-endian), payload. Every append is fsynced before it returns.
// On open the log is scanned; the first frame that is short or fails its CRC marks a torn
// write: the file is truncated there and that frame is never parsed. A large log (the block store's)
// is scanned in chunks (`Wal.scan`) and its frames read back one at a time by offset (`readAt`).
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
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

/** Bytes read at a time while scanning a log. */
const SCAN_CHUNK = 4 * 1024 * 1024;

/**
 * Reads a log's intact frames in order, a chunk at a time (memory: one chunk, or one frame when it is
 * larger). `onFrame` gets the payload (valid only during the call) and the frame's offset. Returns where
 * the first bad frame starts (the file's size when every frame is intact).
 */
export function scanFrames(
  fd: number,
  size: number,
  onFrame: (payload: Buffer, offset: number) => void,
  chunkBytes = SCAN_CHUNK,
): number {
  let buf = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(HEADER, size)));
  let bufStart = 0; // file offset of buf[0]
  let bufLen = 0;
  /** Makes bytes [from, from + n) of the file available in `buf`; false at the end of the file. */
  const want = (from: number, n: number): boolean => {
    if (from + n > size) return false;
    if (from >= bufStart && from + n <= bufStart + bufLen) return true;
    if (n > buf.length) buf = Buffer.allocUnsafe(n);
    bufStart = from;
    bufLen = 0;
    const target = Math.min(buf.length, size - from);
    while (bufLen < target) {
      const read = readSync(fd, buf, bufLen, target - bufLen, from + bufLen);
      if (read === 0) break;
      bufLen += read;
    }
    return from + n <= bufStart + bufLen;
  };
  let offset = 0;
  while (want(offset, HEADER)) {
    const length = buf.readUInt32BE(offset - bufStart + 4);
    if (length > MAX_FRAME_BYTES || !want(offset, HEADER + length)) break;
    const at = offset - bufStart;
    if (crc32(buf.subarray(at + 4, at + HEADER + length)) !== buf.readUInt32BE(at)) break;
    onFrame(buf.subarray(at + HEADER, at + HEADER + length), offset);
    offset += HEADER + length;
  }
  return offset;
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

  /**
   * Opens (or creates) a log without loading it: its intact frames are handed to `onFrame` one at a time
   * (the payload is valid only during the call), and a torn tail is truncated.
   */
  static scan(path: string, onFrame: (payload: Buffer, offset: number) => void): { wal: Wal; truncatedBytes: number } {
    const fd = openSync(path, 'a+');
    try {
      const size = fstatSync(fd).size;
      const validBytes = scanFrames(fd, size, onFrame);
      if (validBytes < size) {
        ftruncateSync(fd, validBytes);
        fsyncSync(fd);
      }
      fsyncDir(path);
      return { wal: new Wal(path, fd, validBytes), truncatedBytes: size - validBytes };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  get bytes(): number {
    return this.size;
  }

  /**
   * The payload of the frame at `offset` (as `scan` or `append` reported it), read from the file and checked
   * against its CRC again; undefined when the bytes there are not an intact frame.
   */
  readAt(offset: number): Buffer | undefined {
    if (offset < 0 || offset + HEADER > this.size) return undefined;
    const header = Buffer.allocUnsafe(HEADER);
    if (readSync(this.fd, header, 0, HEADER, offset) !== HEADER) return undefined;
    const length = header.readUInt32BE(4);
    if (length > MAX_FRAME_BYTES || offset + HEADER + length > this.size) return undefined;
    const frame = Buffer.allocUnsafe(4 + length);
    header.copy(frame, 0, 4, HEADER);
    let read = 0;
    while (read < length) {
      const n = readSync(this.fd, frame, 4 + read, length - read, offset + HEADER + read);
      if (n === 0) return undefined;
      read += n;
    }
    if (crc32(frame) !== header.readUInt32BE(0)) return undefined;
    return frame.subarray(4);
  }

  /** Appends frames and fsyncs; returns only once they are durable, with the offset of the first frame. */
  append(...payloads: Buffer[]): number {
    const buf = payloads.length === 1 ? encodeFrame(payloads[0] as Buffer) : Buffer.concat(payloads.map(encodeFrame));
    const at = this.size;
    let written = 0;
    while (written < buf.length) written += writeSync(this.fd, buf, written, buf.length - written);
    fsyncSync(this.fd);
    this.size += buf.length;
    return at;
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
