/**
 * The consensus gate: every check a consensus message passes before the engine's protocol rules see it, in
 * one place, each refusal with a reason (`RejectReason`, the label of
 * `scriptorium_ledger_rejected_messages_total{reason}`).
 *
 * Two stages share the same checks:
 * - `admit` runs at the door, before the node's bounded inbound queue: the body's shape, the chain id, a
 *   known sender (a member of the active set at the message's height, or at the next height for messages
 *   from further ahead) and the signature. A refused body never takes a place in the queue.
 * - `Gate.route` runs inside the engine for each message it takes: old and future heights (future ones are
 *   buffered until their height starts), the node's own key coming back, rounds too far ahead or already
 *   left, duplicates, and again the sender and signature against the set of the message's own height
 *   (which may differ from the one `admit` guessed). Signature checks are memoized by the caller's `verify`.
 *
 * What remains for the engine's validators (`validation/`) is the content of a message: the proposer of the
 * round, the proposed block, commit seals and the certificates a message carries.
 */
import {
  type ConsensusMessage,
  messageSigningBytes,
  safeParseMessage,
  type Verify,
} from '@scriptorium/ledger-protocol';

/** Messages further ahead than this many rounds are refused (bounded memory). */
export const MAX_ROUNDS_AHEAD = 64;
/** Messages for up to this many heights ahead are buffered until the height starts. */
export const MAX_HEIGHTS_AHEAD = 8;
/** Total buffered future-height messages. */
export const MAX_BUFFERED = 4096;
/** Buffered future-height messages per author (one sender cannot fill the buffer). */
export const MAX_BUFFERED_PER_AUTHOR = 256;

/** Why a message was refused: a small fixed set, so it can label a metric. */
export type RejectReason =
  /** Not a consensus message (JSON shape). */
  | 'malformed'
  /** Another chain's message. */
  | 'wrong_chain'
  /** The author is not in the active set of the message's height. */
  | 'unknown_sender'
  /** The outer signature does not verify. */
  | 'bad_signature'
  /** A height this node already decided or left. */
  | 'old_height'
  /** More than MAX_HEIGHTS_AHEAD heights or MAX_ROUNDS_AHEAD rounds ahead. */
  | 'too_far_ahead'
  /** The future-height buffer is full (in total or for this author). */
  | 'buffer_full'
  /** A message bearing this node's own key: an echo, or a twin holding the same key. */
  | 'own_key'
  /** This node is not a validator of the height (a passive follower). */
  | 'not_validator'
  /** A PRE-PREPARE, PREPARE or ROUND_CHANGE of a round this node already left. */
  | 'old_round'
  /** The author already sent this type for this round (the first one counts). */
  | 'duplicate'
  /** The content does not hold: wrong proposer, bad block, seal or certificate. */
  | 'invalid'
  /** The node's inbound queue is full (503). */
  | 'queue_full';

export const REJECT_REASONS: readonly RejectReason[] = [
  'malformed',
  'wrong_chain',
  'unknown_sender',
  'bad_signature',
  'old_height',
  'too_far_ahead',
  'buffer_full',
  'own_key',
  'not_validator',
  'old_round',
  'duplicate',
  'invalid',
  'queue_full',
];

export interface Refusal {
  ok: false;
  reason: RejectReason;
  /** For the debug log: what exactly was wrong. */
  detail: string;
}

export type Admission = { ok: true; msg: ConsensusMessage } | Refusal;

const refuse = (reason: RejectReason, detail: string): Refusal => ({ ok: false, reason, detail });

/** What `admit` needs to know of the chain. */
export interface ChainView {
  chainId: string;
  /** Height of the last finalized block. */
  height: number;
  /** The active set at a height from 1 to height + 1. */
  activeSetAt(height: number): readonly string[];
}

/** The author is a member of the active set, and the outer signature verifies (memoized by `verify`). */
function checkSender(
  msg: ConsensusMessage,
  members: ReadonlySet<string> | readonly string[],
  verify: Verify,
): Refusal | null {
  const member = Array.isArray(members)
    ? members.includes(msg.author)
    : (members as ReadonlySet<string>).has(msg.author);
  if (!member) return refuse('unknown_sender', `author ${msg.author.slice(0, 16)} is not an active validator`);
  if (!verify(msg.author, messageSigningBytes(msg), msg.signature)) return refuse('bad_signature', 'outer signature');
  return null;
}

/**
 * The door: parses an untrusted POST /consensus body and checks chain id, sender and signature. The sender is
 * checked against the set active at the message's height, or at `height + 1` for a message from further ahead.
 * @example const a = admit(body, chain, verify); if (!a.ok) reply(400, a.reason)
 */
export function admit(body: unknown, chain: ChainView, verify: Verify): Admission {
  const parsed = safeParseMessage(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return refuse('malformed', `${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim());
  }
  const msg = parsed.data;
  if (msg.chain_id !== chain.chainId) return refuse('wrong_chain', `chain ${msg.chain_id}`);
  const sender = checkSender(msg, chain.activeSetAt(Math.min(msg.height, chain.height + 1)), verify);
  return sender ?? { ok: true, msg };
}

/** Where the engine stands when a message arrives. */
export interface GatePosition {
  chainId: string;
  self: string;
  /** The open height, or null before the first `start`. */
  height: number | null;
  round: number;
  /** This node is a validator of the open height. */
  running: boolean;
  /** The open height is decided (waiting for the next `start`). */
  decided: boolean;
  members: ReadonlySet<string>;
  /** The author already has a message of this type in this round (in the engine's round store). */
  seen(msg: ConsensusMessage): boolean;
}

export type Route =
  /** Hand it to the protocol rules; `laggard` when the author still speaks in an older round. */
  | { kind: 'process'; laggard: boolean }
  /** Kept for a future height. */
  | { kind: 'buffered' }
  /** Refused; `laggard` when the author still speaks in an older round (the engine may help it). */
  | (Refusal & { kind: 'reject'; laggard: boolean });

const reject = (reason: RejectReason, detail: string, laggard = false): Route => ({
  kind: 'reject',
  ok: false,
  reason,
  detail,
  laggard,
});

/**
 * The engine's side of the gate: routes each message by height and round and keeps future-height messages
 * (bounded in total, per author, and in how far ahead) until their height starts.
 */
export class Gate {
  readonly #verify: Verify;
  #future = new Map<number, ConsensusMessage[]>();
  #futureCount = 0;
  #futureByAuthor = new Map<string, number>();

  constructor(verify: Verify) {
    this.#verify = verify;
  }

  /** Messages buffered for future heights. */
  get buffered(): number {
    return this.#futureCount;
  }

  route(msg: ConsensusMessage, at: GatePosition): Route {
    if (msg.chain_id !== at.chainId) return reject('wrong_chain', `chain ${msg.chain_id}`);
    if (at.height === null || msg.height > at.height) return this.#buffer(msg, at.height);
    if (msg.height < at.height) return reject('old_height', `height ${msg.height} < ${at.height}`);
    if (!at.running) return reject('not_validator', `not a validator of height ${at.height}`);
    if (at.decided) return reject('old_height', `height ${at.height} is decided`);
    if (msg.author === at.self) return reject('own_key', `${msg.type} with this node's key`);
    if (msg.round > at.round + MAX_ROUNDS_AHEAD) return reject('too_far_ahead', `round ${msg.round} > ${at.round}`);
    const sender = checkSender(msg, at.members, this.#verify);
    if (sender) return { ...sender, kind: 'reject', laggard: false };
    const laggard = msg.round < at.round;
    if (at.seen(msg)) return reject('duplicate', `${msg.type} round ${msg.round}`, laggard);
    // A late COMMIT still counts (a late quorum decides its height); the other types of a left round do not.
    if (laggard && msg.type !== 'COMMIT') return reject('old_round', `${msg.type} round ${msg.round}`, true);
    return { kind: 'process', laggard };
  }

  #buffer(msg: ConsensusMessage, height: number | null): Route {
    if (height !== null && msg.height > height + MAX_HEIGHTS_AHEAD)
      return reject('too_far_ahead', `height ${msg.height} > ${height} + ${MAX_HEIGHTS_AHEAD}`);
    if (this.#futureCount >= MAX_BUFFERED) return reject('buffer_full', `${MAX_BUFFERED} buffered`);
    const byAuthor = this.#futureByAuthor.get(msg.author) ?? 0;
    if (byAuthor >= MAX_BUFFERED_PER_AUTHOR) return reject('buffer_full', `${byAuthor} buffered from this author`);
    const list = this.#future.get(msg.height);
    if (list) list.push(msg);
    else this.#future.set(msg.height, [msg]);
    this.#futureCount++;
    this.#futureByAuthor.set(msg.author, byAuthor + 1);
    return { kind: 'buffered' };
  }

  /** Takes the messages buffered for `height` and drops those of lower heights. */
  release(height: number): ConsensusMessage[] {
    for (const h of [...this.#future.keys()]) if (h < height) this.#drop(h);
    const out = this.#future.get(height) ?? [];
    this.#drop(height);
    return out;
  }

  #drop(h: number): void {
    for (const msg of this.#future.get(h) ?? []) {
      const n = (this.#futureByAuthor.get(msg.author) ?? 1) - 1;
      if (n > 0) this.#futureByAuthor.set(msg.author, n);
      else this.#futureByAuthor.delete(msg.author);
      this.#futureCount--;
    }
    this.#future.delete(h);
  }
}
