/**
 * C2SP signed notes (c2sp.org/signed-note): a UTF-8 text, a blank line, then signature lines
 * `— <key name> <base64(key id ‖ signature)>`. Key ids are the first 4 bytes of SHA-256(name ‖ "\n" ‖ type ‖ key);
 * verifier keys are written `<name>+<key id, 8 hex>+<base64(type ‖ key)>`. Two key types are read here:
 * 0x01, a plain Ed25519 note signature over the text (the log's own signatures), and 0x04, a timestamped
 * tlog-cosignature/v1 (c2sp.org/tlog-cosignature: Ed25519 over `cosignature/v1\ntime <t>\n` ‖ the text, the
 * signature bytes being the 8-byte big-endian time ‖ the 64-byte signature), what witnesses return. Browser-safe.
 */
import { sha256 } from '#platform-crypto';
import { fromBase64, toBase64 } from './base64.ts';
import type { Verify } from './finality.ts';
import { concatBytes, fromHex, toHex } from './hex.ts';

/** Key type of an Ed25519 signed-note signature over the note text. */
export const ALG_ED25519 = 0x01;
/** Key type of a timestamped Ed25519 cosignature (tlog-cosignature/v1). */
export const ALG_COSIGNATURE_V1 = 0x04;
/** What starts every signature line: EM DASH and a space. */
export const SIGNATURE_PREFIX = '\u2014 ';
/** Most signature lines a note may carry (Go's `golang.org/x/mod/sumdb/note` refuses more). */
export const MAX_NOTE_SIGNATURES = 100;
/** Largest note this code reads (a checkpoint with a hundred signatures is under 16 KB). */
export const MAX_NOTE_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** One signature line of a note. */
export interface NoteSignature {
  name: string;
  /** The key id (uint32) the line names. */
  keyId: number;
  /** The signature bytes after the key id. */
  signature: Uint8Array;
  /** The line as written, with its newline. */
  line: string;
}

export interface Note {
  /** The signed text, ending with a newline. */
  text: string;
  signatures: NoteSignature[];
}

/** A verifier key: who signs (name, key id), with what kind of signature, and the Ed25519 public key (hex). */
export interface VerifierKey {
  name: string;
  keyId: number;
  alg: typeof ALG_ED25519 | typeof ALG_COSIGNATURE_V1;
  publicKey: string;
  /** The key as written: `<name>+<key id>+<base64>`. */
  text: string;
}

/** A key name: non-empty, valid text, no whitespace and no `+` (signed-note). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !/[\s+]/u.test(name) && name.isWellFormed();
}

/** SHA-256(name ‖ "\n" ‖ type ‖ key), first 4 bytes big-endian: the key id. */
export function noteKeyId(name: string, alg: number, publicKeyHex: string): number {
  return readUint32(sha256(encoder.encode(`${name}\n`), Uint8Array.of(alg), fromHex(publicKeyHex)));
}

/** The first 4 bytes, big-endian. */
function readUint32(bytes: Uint8Array): number {
  return new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/**
 * The verifier key of an Ed25519 public key under `name`, as `<name>+<key id>+<base64(type ‖ key)>`.
 * @example formatVerifierKey('witness.example/w1', ALG_COSIGNATURE_V1, publicKeyHex)
 */
export function formatVerifierKey(name: string, alg: VerifierKey['alg'], publicKeyHex: string): string {
  if (!isValidKeyName(name)) throw new RangeError(`not a key name: ${JSON.stringify(name)}`);
  const key = concatBytes(Uint8Array.of(alg), fromHex(publicKeyHex));
  return `${name}+${hex8(noteKeyId(name, alg, publicKeyHex))}+${toBase64(key)}`;
}

/** Reads a verifier key; a string says why it is not one. Only Ed25519 keys (types 0x01 and 0x04) are read. */
export function parseVerifierKey(text: string): VerifierKey | string {
  // The base64 key may hold `+` itself: the name and the key id end at the first two.
  const first = text.indexOf('+');
  const second = first < 0 ? -1 : text.indexOf('+', first + 1);
  if (second < 0) return 'a verifier key is <name>+<key id>+<base64 key>';
  const [name, id, b64] = [text.slice(0, first), text.slice(first + 1, second), text.slice(second + 1)];
  if (!isValidKeyName(name))
    return `the key name ${JSON.stringify(name.slice(0, 80))} is empty or holds a space or a +`;
  if (!/^[0-9a-f]{8}$/.test(id)) return 'the key id is not 8 lower-case hex characters';
  const key = fromBase64(b64);
  if (key === null) return 'the key is not canonical base64';
  const alg = key[0];
  if (alg !== ALG_ED25519 && alg !== ALG_COSIGNATURE_V1)
    return `key type 0x${(alg ?? 0).toString(16).padStart(2, '0')} is not Ed25519 (0x01) or an Ed25519 cosignature (0x04)`;
  if (key.length !== 33) return 'an Ed25519 key is 32 bytes';
  const publicKey = toHex(key.subarray(1));
  if (noteKeyId(name, alg, publicKey) !== Number.parseInt(id, 16)) return 'the key id does not match the name and key';
  return { name, keyId: Number.parseInt(id, 16), alg, publicKey, text: `${name}+${id}+${b64}` };
}

/** A signature line: `— <name> <base64(key id ‖ signature)>\n`. */
export function signatureLine(name: string, keyId: number, signature: Uint8Array): string {
  const id = Uint8Array.of(keyId >>> 24, (keyId >>> 16) & 0xff, (keyId >>> 8) & 0xff, keyId & 0xff);
  return `${SIGNATURE_PREFIX}${name} ${toBase64(concatBytes(id, signature))}\n`;
}

/** Text of note bytes: valid UTF-8 only (a string says why not). */
export function noteText(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Reads a signed note (text, blank line, signature lines); a string says why it is not one. The text must be
 * valid text without control characters other than newlines and end with a newline; every signature line must be
 * well formed; at most `MAX_NOTE_SIGNATURES` of them. Signatures are not checked here.
 */
export function parseNote(input: string | Uint8Array): Note | string {
  const all = typeof input === 'string' ? input : noteText(input);
  if (all === null) return 'the note is not valid UTF-8';
  if (all.length > MAX_NOTE_BYTES) return `the note is over ${MAX_NOTE_BYTES} bytes`;
  if (!all.isWellFormed()) return 'the note is not valid text';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u0009\u000b-\u001f]/.test(all)) return 'the note holds a control character other than a newline';
  const split = all.lastIndexOf('\n\n');
  if (split < 0) return 'no blank line before the signatures';
  const text = all.slice(0, split + 1);
  const sigs = all.slice(split + 2);
  if (sigs.length === 0 || !sigs.endsWith('\n')) return 'no signature lines (or the last one lacks its newline)';
  const signatures: NoteSignature[] = [];
  for (const raw of sigs.slice(0, -1).split('\n')) {
    if (!raw.startsWith(SIGNATURE_PREFIX)) return 'a signature line does not start with "— "';
    const rest = raw.slice(SIGNATURE_PREFIX.length);
    const space = rest.indexOf(' ');
    const name = space < 0 ? '' : rest.slice(0, space);
    const bytes = space < 0 ? null : fromBase64(rest.slice(space + 1));
    if (!isValidKeyName(name) || bytes === null || bytes.length < 5) return 'a signature line is malformed';
    if (signatures.length === MAX_NOTE_SIGNATURES) return `more than ${MAX_NOTE_SIGNATURES} signatures`;
    signatures.push({ name, keyId: readUint32(bytes), signature: bytes.subarray(4), line: `${raw}\n` });
  }
  return { text, signatures };
}

/** A note's text and signature lines joined: text, blank line, lines. */
export function formatNote(text: string, lines: readonly string[]): string {
  return `${text}\n${lines.join('')}`;
}

/** What a tlog-cosignature/v1 signs: `cosignature/v1\ntime <t>\n` and the note text. */
export function cosignatureMessage(time: number, text: string): Uint8Array {
  return encoder.encode(`cosignature/v1\ntime ${time}\n${text}`);
}

/** The time (seconds since the epoch) of a cosignature line's signature bytes, or null when they are not 72 bytes. */
export function cosignatureTime(signature: Uint8Array): number | null {
  if (signature.length !== 72) return null;
  let t = 0;
  for (let i = 0; i < 8; i++) t = t * 256 + (signature[i] as number);
  return Number.isSafeInteger(t) ? t : null;
}

/**
 * True when `sig` is `key`'s valid signature over `text`: the line names the key (name and id) and, by its type,
 * is an Ed25519 signature of the text or a cosignature/v1 of it.
 */
export function verifyNoteSignature(key: VerifierKey, text: string, sig: NoteSignature, verify: Verify): boolean {
  if (sig.name !== key.name || sig.keyId !== key.keyId) return false;
  if (key.alg === ALG_ED25519)
    return sig.signature.length === 64 && verify(key.publicKey, encoder.encode(text), toHex(sig.signature));
  const time = cosignatureTime(sig.signature);
  if (time === null) return false;
  return verify(key.publicKey, cosignatureMessage(time, text), toHex(sig.signature.subarray(8)));
}
