// A segment object: consecutive blocks, one JSON document a line (NDJSON), gzip-compressed. The manifest's hash
// is of these stored bytes, so a changed byte is found before anything is decompressed or parsed.
import { gunzipSync, gzipSync } from 'node:zlib';

/** Compresses the blocks' JSON lines (level 1: a backup should cost the machine little; JSON still shrinks ~5×). */
export function encodeSegment(lines: readonly string[]): Buffer {
  return gzipSync(Buffer.from(`${lines.join('\n')}\n`, 'utf8'), { level: 1 });
}

/** The segment's blocks as parsed JSON values; throws a readable Error when the bytes are not a segment. */
export function decodeSegment(bytes: Uint8Array, maxBytes = 2 * 1024 * 1024 * 1024): unknown[] {
  let text: string;
  try {
    text = gunzipSync(bytes, { maxOutputLength: maxBytes }).toString('utf8');
  } catch (err) {
    throw new Error(`not a gzip segment (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, i) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new Error(`line ${i + 1} is not JSON`);
    }
  });
}
