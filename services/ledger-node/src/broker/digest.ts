// Keyed digests for the watcher's in-memory comparisons: what it remembers of the brokers and of the chain is
// kept as short digests rather than values. The key is random per process (the memory is rebuilt from the
// chain on every start), so whoever writes to a broker — the party the watcher checks — cannot compute these
// digests, let alone choose a value whose digest matches the one it replaces: a tamper cannot hide behind a
// collision. SHA-256 over key ‖ data; the digests are Latin-1 ('binary') strings, one byte a character in V8.
import { createHash, hash, randomBytes } from 'node:crypto';

const KEY = randomBytes(32).toString('latin1');

/** Characters of a 64-bit digest (one byte a character). */
export const DIGEST64_CHARS = 8;

/** 64 bits (8 characters) of SHA-256(key ‖ text): an attribute's form, an observation, an entity. */
export function digest64(text: string): string {
  return hash('sha256', KEY + text, 'binary').slice(0, DIGEST64_CHARS);
}

/** 64 bits (8 characters) of SHA-256(key ‖ bytes[start, end)): one entity of a listing page, as received. */
export function digest64Bytes(bytes: Buffer, start: number, end: number): string {
  return hash('sha256', KEY + bytes.toString('latin1', start, end), 'binary').slice(0, DIGEST64_CHARS);
}

/** 128 bits (16 characters) of SHA-256(key ‖ bytes): one page of a broker's listing. */
export function digestBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(KEY, 'latin1').update(bytes).digest('binary').slice(0, 16);
}

/** What stands for "absent" where a 64-bit digest is expected. */
export const ABSENT = '\u0000'.repeat(DIGEST64_CHARS);
