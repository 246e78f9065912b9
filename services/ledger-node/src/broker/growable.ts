// Growing arrays in place of maps: the watcher's per-entity state is indexed by entity numbers (entities.ts).

/**
 * A copy of `bytes` at least `length` long, a quarter longer at least (so that growing one entry at a time stays
 * cheap, while what a million entities leave unused stays a fifth of what they use, not half).
 */
export function grownTo(bytes: Uint8Array, length: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(Math.max(length, bytes.length + (bytes.length >> 2), 1024));
  grown.set(bytes);
  return grown;
}

/** The same for 32-bit arrays (entity numbers, offsets). */
export function grown32(words: Uint32Array, length: number): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(Math.max(length, words.length + (words.length >> 2), 1024));
  grown.set(words);
  return grown;
}

/** Sets `a[i]`, filling the gap below with undefined (a dense array, never a sparse dictionary). */
export function setAt<T>(a: Array<T | undefined>, i: number, value: T | undefined): void {
  while (a.length < i) a.push(undefined);
  a[i] = value;
}
