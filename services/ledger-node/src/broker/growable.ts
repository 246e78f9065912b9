// Growing arrays in place of maps: the watcher's per-entity state is indexed by entity numbers (entities.ts).

/** A copy of `bytes` at least `length` long (doubled at least, so that growing one entry at a time stays cheap). */
export function grownTo(bytes: Uint8Array, length: number): Uint8Array<ArrayBuffer> {
  const grown = new Uint8Array(Math.max(length, 2 * bytes.length));
  grown.set(bytes);
  return grown;
}

/** Sets `a[i]`, filling the gap below with undefined (a dense array, never a sparse dictionary). */
export function setAt<T>(a: Array<T | undefined>, i: number, value: T | undefined): void {
  while (a.length < i) a.push(undefined);
  a[i] = value;
}
