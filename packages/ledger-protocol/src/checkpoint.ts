/**
 * The chain as a transparency log: a C2SP checkpoint (c2sp.org/tlog-checkpoint) names the log (origin line), its
 * size (the number of blocks of the finalized chain, block 0 included: the tip's height + 1) and its root, the
 * RFC 6962 root over the block hashes in height order (leaf i = the 32 bytes of block i's hash).
 *
 * The log's signature, for a BFT set. There is no single log key: a checkpoint of size n carries standard Ed25519
 * signed-note signatures (key type 0x01, key name = the origin) from a quorum of the validators active at its last
 * block (height n − 1), each with its own key id, each the signature of that validator's key over the checkpoint
 * text. A witness that knows only standard Ed25519 note keys is given one verifier key per validator (all named by
 * the origin) and verifies the signatures it knows, as signed-note verifiers do; `ledger-node witness` also requires
 * a quorum of them. Our verifiers require the quorum of the set they derive from the genesis.
 *
 * Why a validator key may sign text as well as consensus messages: those are canonical JSON objects that begin with
 * `{"domain":"scriptorium-ledger/v1/`, and an origin never begins with `{` (ORIGIN_PATTERN), so no checkpoint text
 * is ever the bytes of a consensus message, and a cosignature's message begins with `cosignature/v1`.
 */
import { fromBase64, toBase64 } from './base64.ts';
import type { Verify } from './finality.ts';
import { fromHex, toHex } from './hex.ts';
import {
  ALG_ED25519,
  formatNote,
  type Note,
  noteKeyId,
  parseNote,
  signatureLine,
  type VerifierKey,
  verifyNoteSignature,
} from './note.ts';
import { quorumSize } from './validators.ts';

/** An origin line this log writes: printable ASCII without space or `+`, not starting with `{`. */
export const ORIGIN_PATTERN = /^[!-*,-z|~][!-*,-~]{0,254}$/;

/** The origin of a chain's checkpoints when none is configured. */
export function defaultOrigin(chainId: string): string {
  return `scriptorium.dev/ledger/${chainId}`;
}

export interface Checkpoint {
  origin: string;
  /** Number of leaves: blocks 0 … size − 1. */
  size: number;
  /** RFC 6962 root (32 bytes). */
  root: Uint8Array;
  /** Extension lines (each non-empty, ending with a newline), or ''. */
  extension: string;
}

/** The checkpoint's text: origin, size, base64 root, each on its own line, then any extension lines. */
export function formatCheckpoint(c: Checkpoint): string {
  return `${c.origin}\n${c.size}\n${toBase64(c.root)}\n${c.extension}`;
}

/** Reads a checkpoint's text (the note text, without signatures); a string says why it is not one. */
export function parseCheckpoint(text: string): Checkpoint | string {
  if (!text.endsWith('\n')) return 'a checkpoint ends with a newline';
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) return 'a checkpoint has an origin, a size and a root line';
  const [origin, sizeText, rootText, ...extension] = lines as [string, string, string, ...string[]];
  if (origin.length === 0) return 'the origin line is empty';
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    return 'the size line is not a decimal size';
  const root = fromBase64(rootText);
  if (root === null || root.length !== 32) return 'the root line is not a base64 SHA-256 hash';
  if (extension.some((l) => l.length === 0)) return 'an extension line is empty';
  return {
    origin,
    size: Number(sizeText),
    root,
    extension: extension.map((l) => `${l}\n`).join(''),
  };
}

/** The leaf data of block `hash` in the checkpoint tree: the 32 bytes of the block hash. */
export function blockLeafData(blockHashHex: string): Uint8Array {
  return fromHex(blockHashHex);
}

/** The signed-note verifier key of a validator as a signer of the log's checkpoints (type 0x01, name = origin). */
export function logVerifierKey(origin: string, validator: string): VerifierKey {
  const keyId = noteKeyId(origin, ALG_ED25519, validator);
  const text = `${origin}+${keyId.toString(16).padStart(8, '0')}+${toBase64(Uint8Array.of(ALG_ED25519, ...fromHex(validator)))}`;
  return { name: origin, keyId, alg: ALG_ED25519, publicKey: validator, text };
}

/** A validator's signature line on checkpoint text (its Ed25519 signature of the text, hex). */
export function logSignatureLine(origin: string, validator: string, signatureHex: string): string {
  return signatureLine(origin, noteKeyId(origin, ALG_ED25519, validator), fromHex(signatureHex));
}

/** What a checkpoint's log signatures are worth against a validator set. */
export interface LogSignatures {
  ok: boolean;
  reason?: string;
  /** Validators (public keys) whose valid signature the note carries. */
  signers: string[];
  /** Their signature lines, as written. */
  lines: string[];
  validators: number;
  quorum: number;
}

/**
 * The log signatures of a note: valid signatures by distinct members of `activeSet` (key name = `origin`), a quorum
 * of them. A line naming a member's key with a bad signature makes the note malformed (as signed-note says); lines of
 * other keys (witnesses' cosignatures, anyone else) are not counted.
 */
export function judgeLogSignatures(
  note: Note,
  origin: string,
  activeSet: readonly string[],
  verify: Verify,
): LogSignatures {
  const members = new Set(activeSet);
  const quorum = quorumSize(members.size);
  const byId = new Map<number, VerifierKey>();
  for (const v of members) {
    const key = logVerifierKey(origin, v);
    byId.set(key.keyId, key);
  }
  const signers = new Set<string>();
  const lines: string[] = [];
  for (const sig of note.signatures) {
    if (sig.name !== origin) continue;
    const key = byId.get(sig.keyId);
    if (key === undefined) continue;
    if (!verifyNoteSignature(key, note.text, sig, verify))
      return {
        ok: false,
        reason: `the signature of validator ${key.publicKey.slice(0, 12)}… does not verify`,
        signers: [...signers],
        lines,
        validators: members.size,
        quorum,
      };
    if (!signers.has(key.publicKey)) lines.push(sig.line);
    signers.add(key.publicKey);
  }
  const ok = signers.size >= quorum;
  return {
    ok,
    ...(ok ? {} : { reason: `${signers.size} valid signatures of validators active there, quorum is ${quorum}` }),
    signers: [...signers],
    lines,
    validators: members.size,
    quorum,
  };
}

/**
 * A checkpoint note of `tree` (size, root) signed by the given validators' signatures (`sign(text)` per validator).
 * @example logSignedCheckpoint(origin, size, root, [[pk, (t) => signer.sign(t)]])
 */
export function logSignedCheckpoint(
  origin: string,
  size: number,
  root: Uint8Array,
  signers: ReadonlyArray<readonly [string, (message: Uint8Array) => string]>,
): string {
  const text = formatCheckpoint({ origin, size, root, extension: '' });
  const bytes = new TextEncoder().encode(text);
  return formatNote(
    text,
    signers.map(([validator, sign]) => logSignatureLine(origin, validator, sign(bytes))),
  );
}

/** A parsed note whose text is a checkpoint. */
export interface CheckpointNote {
  note: Note;
  checkpoint: Checkpoint;
}

/** Reads a signed checkpoint (note and checkpoint text); a string says why it is not one. */
export function parseCheckpointNote(input: string | Uint8Array): CheckpointNote | string {
  const note = parseNote(input);
  if (typeof note === 'string') return note;
  const checkpoint = parseCheckpoint(note.text);
  if (typeof checkpoint === 'string') return checkpoint;
  return { note, checkpoint };
}

/** The root as hex (for reports and JSON bodies). */
export const rootHex = (c: Checkpoint): string => toHex(c.root);
