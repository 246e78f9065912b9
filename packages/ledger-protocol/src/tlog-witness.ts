/**
 * The C2SP `tlog-witness` protocol's wire formats (c2sp.org/tlog-witness): the `add-checkpoint` request a log sends
 * (`old <size>`, the consistency proof as base64 lines, a blank line, the signed checkpoint), the witness's answers
 * (cosignature lines on 200, the witness's size as `text/x.tlog.size` on 409), and a witness's cosignature. The
 * parser is what `ledger-node witness` reads requests with (and what its fuzz test drives); the formatter is what
 * the validators send to every witness, ours and others'.
 */
import { fromBase64, toBase64 } from './base64.ts';
import { fromHex } from './hex.ts';
import {
  ALG_COSIGNATURE_V1,
  cosignatureMessage,
  noteKeyId,
  noteText,
  SIGNATURE_PREFIX,
  signatureLine,
} from './note.ts';
import { MAX_PROOF_HASHES } from './tlog-proof.ts';

/** The path of the call under a witness's submission prefix. */
export const ADD_CHECKPOINT_PATH = '/add-checkpoint';
/** Content type of a 409's body: the witness's latest size and a newline. */
export const SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** Largest request body a witness reads (litewitness refuses bodies over 10 KiB; ours allows this much). */
export const MAX_ADD_CHECKPOINT_BYTES = 64 * 1024;

export interface AddCheckpoint {
  /** The size of the checkpoint the client believes the witness cosigned last (0: none). */
  oldSize: number;
  /** RFC 6962 consistency proof from `oldSize` to the checkpoint's size. */
  proof: Uint8Array[];
  /** The signed checkpoint, verbatim. */
  checkpoint: string;
}

const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/** The request body of `add-checkpoint`. */
export function formatAddCheckpoint(request: AddCheckpoint): string {
  return `old ${request.oldSize}\n${request.proof.map((h) => `${toBase64(h)}\n`).join('')}\n${request.checkpoint}`;
}

/**
 * Reads an `add-checkpoint` body; a string says why it is malformed (a 400). Strict: the old size in decimal without
 * leading zeroes, at most 63 proof lines of canonical base64 of 32 bytes, the blank line, then a checkpoint that is
 * valid UTF-8 (its signatures are judged by the caller). Never throws.
 */
export function parseAddCheckpoint(body: Uint8Array | string): AddCheckpoint | string {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  if (bytes.length > MAX_ADD_CHECKPOINT_BYTES) return `body over ${MAX_ADD_CHECKPOINT_BYTES} bytes`;
  const text = noteText(bytes);
  if (text === null) return 'body is not valid UTF-8';
  const head = text.indexOf('\n\n');
  if (head < 0) return 'no blank line after the old size and proof lines';
  const lines = text.slice(0, head).split('\n');
  const first = lines[0] as string;
  if (!first.startsWith('old ') || !DECIMAL.test(first.slice(4))) return 'the first line is not "old <size>"';
  const oldSize = Number(first.slice(4));
  if (!Number.isSafeInteger(oldSize)) return 'the old size is too large';
  const proofLines = lines.slice(1);
  if (proofLines.length > MAX_PROOF_HASHES) return `more than ${MAX_PROOF_HASHES} proof lines`;
  const proof: Uint8Array[] = [];
  for (const line of proofLines) {
    const hash = fromBase64(line);
    if (hash === null || hash.length !== 32) return 'a proof line is not a base64 SHA-256 hash';
    proof.push(hash);
  }
  const checkpoint = text.slice(head + 2);
  if (checkpoint.length === 0) return 'no checkpoint after the blank line';
  return { oldSize, proof, checkpoint };
}

/** The body of a 409: the witness's latest size. */
export function formatSizeResponse(size: number): string {
  return `${size}\n`;
}

/** A 409 body's size, or null when it is not `<decimal>\n`. */
export function parseSizeResponse(body: string): number | null {
  if (!body.endsWith('\n')) return null;
  const line = body.slice(0, -1);
  return DECIMAL.test(line) && Number.isSafeInteger(Number(line)) ? Number(line) : null;
}

/** The signature lines of a 200 answer, each with its newline; a string when the body is not only such lines. */
export function parseCosignatureLines(body: string): string[] | string {
  if (body.length === 0 || !body.endsWith('\n')) return 'the answer is not signature lines';
  const lines = body.slice(0, -1).split('\n');
  if (lines.length > 16) return 'more than 16 signature lines';
  for (const line of lines) if (!line.startsWith(SIGNATURE_PREFIX)) return 'a line of the answer is not a signature';
  return lines.map((l) => `${l}\n`);
}

/**
 * A witness's cosignature line (tlog-cosignature/v1) on checkpoint text: `sign` signs bytes with the witness key and
 * returns the signature in hex; `time` is seconds since the epoch.
 * @example cosignatureLine('witness.example/w1', signer.publicKey, (m) => signer.sign(m), text, now)
 */
export function cosignatureLine(
  name: string,
  publicKeyHex: string,
  sign: (message: Uint8Array) => string,
  text: string,
  time: number,
): string {
  if (!Number.isSafeInteger(time) || time < 0) throw new RangeError('a cosignature time is seconds since the epoch');
  const timeBytes = new Uint8Array(8);
  let t = time;
  for (let i = 7; i >= 0; i--) {
    timeBytes[i] = t % 256;
    t = Math.floor(t / 256);
  }
  const signature = fromHex(sign(cosignatureMessage(time, text)));
  const bytes = new Uint8Array(72);
  bytes.set(timeBytes, 0);
  bytes.set(signature, 8);
  return signatureLine(name, noteKeyId(name, ALG_COSIGNATURE_V1, publicKeyHex), bytes);
}
