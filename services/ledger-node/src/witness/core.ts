// The decision of a tlog-witness on one `add-checkpoint` request (c2sp.org/tlog-witness), pure: the request bytes,
// the logs it follows and what it cosigned last in, a verdict out. The server persists an accepted checkpoint and
// only then returns the cosignature. What it guarantees, per log:
//   - it never cosigns two different roots for one size (same size: the same root, or 409, recorded as a split view);
//   - it never cosigns a checkpoint that does not extend the last one it cosigned (the consistency proof from that
//     size must verify: else 422, recorded as proof of a fork), nor a smaller one (409 with its size);
//   - the checkpoint must carry valid signatures from a quorum of the log's keys it knows (C2SP signed-note keys,
//     key name = the origin; a line naming a known key with a bad signature is a refusal, lines of others are
//     ignored), so no single validator can move it.
// Status codes follow the spec: 400 malformed, 404 unknown origin, 403 signatures, 409 old size (with the size,
// text/x.tlog.size) or same size with another root, 422 proof.
import {
  equalBytes,
  parseAddCheckpoint,
  parseCheckpointNote,
  parseVerifierKey,
  quorumSize,
  sha256,
  toBase64,
  type VerifierKey,
  type Verify,
  verifyConsistency,
  verifyNoteSignature,
  type WitnessLog,
} from '@scriptorium/ledger-protocol';

/** A log as the witness follows it. */
export interface FollowedLog {
  origin: string;
  keys: VerifierKey[];
  quorum: number;
}

/** What the witness cosigned last for one log. */
export interface LogHead {
  size: number;
  root: Uint8Array;
}

export type Decision =
  | {
      status: 200;
      origin: string;
      size: number;
      root: Uint8Array;
      text: string;
      unchanged: boolean;
      /** The size it extends and the length of the consistency proof that showed it. */
      oldSize: number;
      proofLength: number;
    }
  | { status: 409; knownSize: number }
  | {
      status: 400 | 403 | 404 | 409 | 422;
      message: string;
      /** A validly signed checkpoint that contradicts what the witness cosigned: kept as evidence. */
      conflict?: { origin: string; size: number; knownSize: number; knownRoot: string; note: string };
    };

/** The root of the empty tree: SHA-256 of nothing. */
const EMPTY_TREE = sha256(new Uint8Array(0));

/** The logs of the witness's configuration, keys parsed (the settings schema has checked them). */
export function followedLogs(logs: readonly WitnessLog[]): Map<string, FollowedLog> {
  const out = new Map<string, FollowedLog>();
  for (const log of logs) {
    const keys = log.keys.map((k) => parseVerifierKey(k)).filter((k): k is VerifierKey => typeof k !== 'string');
    out.set(log.origin, { origin: log.origin, keys, quorum: log.quorum ?? quorumSize(keys.length) });
  }
  return out;
}

/**
 * Judges one add-checkpoint body against the followed logs and the heads cosigned so far.
 * @example const d = decide(body, logs, (origin) => state.head(origin), verifySignature)
 */
export function decide(
  body: Uint8Array,
  logs: ReadonlyMap<string, FollowedLog>,
  headOf: (origin: string) => LogHead | undefined,
  verify: Verify,
): Decision {
  const request = parseAddCheckpoint(body);
  if (typeof request === 'string') return { status: 400, message: request };
  const parsed = parseCheckpointNote(request.checkpoint);
  if (typeof parsed === 'string') return { status: 400, message: `malformed checkpoint: ${parsed}` };
  const { note, checkpoint: cp } = parsed;
  const log = logs.get(cp.origin);
  if (!log) return { status: 404, message: `unknown log ${JSON.stringify(cp.origin.slice(0, 200))}` };
  const signers = new Set<number>();
  for (const sig of note.signatures) {
    const key = log.keys.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (!key) continue;
    if (!verifyNoteSignature(key, note.text, sig, verify))
      return {
        status: 403,
        message: `the signature of key ${key.keyId.toString(16).padStart(8, '0')} does not verify`,
      };
    signers.add(key.keyId);
  }
  if (signers.size < log.quorum)
    return {
      status: 403,
      message: `${signers.size} valid signatures of the log's known keys, the witness wants ${log.quorum}`,
    };
  if (request.oldSize > cp.size)
    return { status: 400, message: `old size ${request.oldSize} is above the checkpoint's ${cp.size}` };
  const head = headOf(cp.origin) ?? { size: 0, root: EMPTY_TREE };
  if (request.oldSize !== head.size) return { status: 409, knownSize: head.size };
  const conflict = (message: string, status: 409 | 422): Decision => ({
    status,
    message,
    conflict: {
      origin: cp.origin,
      size: cp.size,
      knownSize: head.size,
      knownRoot: toBase64(head.root),
      note: request.checkpoint,
    },
  });
  if (cp.size === 0 && !equalBytes(cp.root, EMPTY_TREE))
    return { status: 422, message: 'a tree of size 0 has the empty root' };
  if (request.oldSize === 0 && request.proof.length > 0)
    return { status: 400, message: 'a proof from size 0 is empty' };
  if (cp.size === head.size) {
    if (!equalBytes(cp.root, head.root))
      return conflict(
        `another root for size ${cp.size}, which this witness cosigned with root ${toBase64(head.root)}`,
        409,
      );
    return {
      status: 200,
      origin: cp.origin,
      size: cp.size,
      root: cp.root,
      text: note.text,
      unchanged: true,
      oldSize: head.size,
      proofLength: 0,
    };
  }
  if (!verifyConsistency(head.size, cp.size, head.root, cp.root, request.proof))
    return conflict(
      `the checkpoint of size ${cp.size} does not extend the one of size ${head.size} this witness cosigned`,
      422,
    );
  return {
    status: 200,
    origin: cp.origin,
    size: cp.size,
    root: cp.root,
    text: note.text,
    unchanged: false,
    oldSize: head.size,
    proofLength: request.proof.length,
  };
}
