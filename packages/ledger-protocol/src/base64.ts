// Standard base64 (RFC 4648 §4) without `Buffer`, so it runs in browsers as well as in Node: the encoding of C2SP
// signed notes, checkpoints and tlog-witness requests.

/** Base64 (standard alphabet, padded) of bytes. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    binary += String.fromCharCode(...bytes.subarray(i, Math.min(i + 0x8000, bytes.length)));
  return btoa(binary);
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Bytes of canonical base64 (standard alphabet, padded, no whitespace, unused bits zero); null on anything else, so
 * that one value has exactly one spelling.
 * @example fromBase64('AAE=') // Uint8Array [0, 1]
 */
export function fromBase64(text: string): Uint8Array | null {
  if (!BASE64.test(text)) return null;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return toBase64(out) === text ? out : null;
}
