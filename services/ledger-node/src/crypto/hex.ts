const HEX = /^(?:[0-9a-f]{2})*$/;

/** Lower-case hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Bytes of a lower-case, even-length hex string; throws on anything else. */
export function fromHex(hex: string): Uint8Array {
  if (!HEX.test(hex)) throw new TypeError('invalid hex string');
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/** Concatenate byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}
