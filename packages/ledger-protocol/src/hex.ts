// Hex encoding without `Buffer`, so it runs in browsers as well as in Node.

const HEX = /^(?:[0-9a-f]{2})*$/;
const BYTE_HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += BYTE_HEX[bytes[i] as number];
  return out;
}

function nibble(c: number): number {
  return c <= 57 ? c - 48 : c - 87; // '0'-'9', 'a'-'f' (input already checked)
}

/** Bytes of a lower-case, even-length hex string; throws a TypeError on anything else. */
export function fromHex(hex: string): Uint8Array {
  if (!HEX.test(hex)) throw new TypeError('invalid hex string');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++)
    out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

/** The concatenation of byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}
