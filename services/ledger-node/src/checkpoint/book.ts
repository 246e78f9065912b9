// What a node holds of its chain's checkpoints: the tree (the chain state's), this validator's own log signature,
// the best checkpoint it has (by size, then by cosignatures) and the best one the witness policy is met by, and
// what each witness last cosigned. Every checkpoint it keeps is checked against its own chain first: same origin,
// a size it has, the root of its own tree at that size (else it is a split view: refused, counted, logged), a quorum
// of log signatures of the set active at its last block, and only the cosignatures of the configured witnesses
// that verify. No I/O: the coordinator (coordinator.ts) and the routes call it.
import {
  type CheckpointEvidence,
  checkpointEvidence,
  cosignatureTime,
  formatCheckpoint,
  formatNote,
  judgeLogSignatures,
  logSignatureLine,
  type Note,
  parseCheckpointNote,
  parseVerifierKey,
  toHex,
  type VerifierKey,
  type Verify,
  verifyNoteSignature,
  type WitnessEndpoint,
  type WitnessStatusBody,
} from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import type { ChainState } from '../node/chain-state.ts';

/** A checkpoint kept: its size, the note as kept (text, valid log signatures, verified cosignatures), who cosigned. */
interface Held {
  size: number;
  note: string;
  cosigners: Set<string>;
}

interface WitnessState {
  endpoint: WitnessEndpoint;
  key: VerifierKey;
  /** Largest size it cosigned (0: none seen), and that cosignature's time (s). */
  size: number;
  cosignedAt: number | null;
  lastError: string | null;
  lastAttempt: number | null;
}

export type AcceptResult =
  | { status: 'kept' | 'known'; size: number; cosigners: string[] }
  | { status: 'ahead'; reason: string }
  | { status: 'invalid'; reason: string }
  | { status: 'conflict'; reason: string; size: number; theirs: string; ours: string };

export interface CheckpointBookOptions {
  origin: string;
  chain: ChainState;
  witnesses: readonly WitnessEndpoint[];
  threshold: number;
  /** This validator's key (undefined: it never signs). */
  signer: Signer | undefined;
  verify: Verify;
  /** Told of each block a witnessed checkpoint covers for the first time (its height). */
  onWitnessed?: (height: number) => void;
}

const encoder = new TextEncoder();

export class CheckpointBook {
  readonly origin: string;
  readonly threshold: number;
  private readonly chain: ChainState;
  private readonly signer: Signer | undefined;
  private readonly verify: Verify;
  private readonly witnesses: WitnessState[];
  private readonly onWitnessed: ((height: number) => void) | undefined;
  private latest: Held | undefined;
  private witnessedHeld: Held | undefined;
  /** This validator's last signature line, by size (a round's retries ask for the same size). */
  private signed: { size: number; line: string } | undefined;

  constructor(options: CheckpointBookOptions) {
    this.origin = options.origin;
    this.chain = options.chain;
    this.signer = options.signer;
    this.verify = options.verify;
    this.threshold = options.threshold;
    this.onWitnessed = options.onWitnessed;
    this.witnesses = options.witnesses.map((endpoint) => {
      const key = parseVerifierKey(endpoint.key);
      if (typeof key === 'string') throw new TypeError(`witness ${endpoint.name}: ${key}`);
      return { endpoint, key, size: 0, cosignedAt: null, lastError: null, lastAttempt: null };
    });
  }

  /** The log's size: blocks 0 … tip. */
  get size(): number {
    return this.chain.height + 1;
  }

  /** The configured witnesses. */
  get endpoints(): WitnessEndpoint[] {
    return this.witnesses.map((w) => w.endpoint);
  }

  /** The checkpoint text of the first `size` blocks of this node's chain. */
  text(size: number): string {
    return formatCheckpoint({ origin: this.origin, size, root: this.chain.log.root(size), extension: '' });
  }

  /** This validator's log signature line on the checkpoint of `size` (at most the node's own size). */
  sign(size: number): string {
    if (this.signer === undefined) throw new RangeError('this node holds no validator key');
    if (!Number.isSafeInteger(size) || size < 2 || size > this.size)
      throw new RangeError(`no checkpoint of size ${size} here (size ${this.size})`);
    if (this.signed?.size === size) return this.signed.line;
    const line = logSignatureLine(
      this.origin,
      this.signer.publicKey,
      this.signer.sign(encoder.encode(this.text(size))),
    );
    this.signed = { size, line };
    return line;
  }

  /** The witness's last known size (what `old` to send it). */
  witnessSize(name: string): number {
    return this.witnesses.find((w) => w.endpoint.name === name)?.size ?? 0;
  }

  /** Records the outcome of one submission to a witness (the coordinator's); errors are shown in the status. */
  recordAttempt(name: string, at: number, error: string | null, knownSize?: number): void {
    const w = this.witnesses.find((x) => x.endpoint.name === name);
    if (!w) return;
    w.lastAttempt = at;
    w.lastError = error;
    // A 409 tells what the witness holds; it never goes back.
    if (knownSize !== undefined && knownSize > w.size) w.size = knownSize;
  }

  /**
   * Takes a checkpoint (from this node's own round, or a peer's POST /checkpoint/cosigned) after checking it against
   * this node's chain; keeps it when it is larger than what the node holds, or merges its cosignatures when it is
   * the same. See the file's comment.
   */
  accept(input: string): AcceptResult {
    const parsed = parseCheckpointNote(input);
    if (typeof parsed === 'string') return { status: 'invalid', reason: `not a signed checkpoint: ${parsed}` };
    const { note, checkpoint: cp } = parsed;
    if (cp.origin !== this.origin)
      return { status: 'invalid', reason: `origin ${JSON.stringify(cp.origin)} is not this log's` };
    if (cp.extension !== '') return { status: 'invalid', reason: 'this log writes no extension lines' };
    if (cp.size < 2) return { status: 'invalid', reason: `size ${cp.size}: a checkpoint covers at least block 1` };
    if (cp.size > this.size) return { status: 'ahead', reason: `size ${cp.size}, this node has ${this.size}` };
    const ours = toHex(this.chain.log.root(cp.size));
    const theirs = toHex(cp.root);
    if (ours !== theirs)
      return {
        status: 'conflict',
        reason: `another root for size ${cp.size}: a split view`,
        size: cp.size,
        theirs,
        ours,
      };
    const log = judgeLogSignatures(note, this.origin, this.chain.activeSetAt(cp.size - 1), this.verify);
    if (!log.ok) return { status: 'invalid', reason: `log signatures: ${log.reason}` };
    return this.keep(cp.size, note.text, log.lines, this.cosignatures(note, cp.size));
  }

  /** The cosignature lines of the configured witnesses that verify, by witness name; updates each witness's state. */
  private cosignatures(note: Note, size: number): Map<string, string> {
    const out = new Map<string, string>();
    for (const w of this.witnesses) {
      const sig = note.signatures.find(
        (s) =>
          s.name === w.key.name && s.keyId === w.key.keyId && verifyNoteSignature(w.key, note.text, s, this.verify),
      );
      if (!sig) continue;
      out.set(w.endpoint.name, sig.line);
      if (size >= w.size) {
        w.size = size;
        w.cosignedAt = cosignatureTime(sig.signature);
      }
    }
    return out;
  }

  private keep(size: number, text: string, logLines: string[], cosigned: Map<string, string>): AcceptResult {
    const held = this.latest;
    let result: Held;
    if (held && held.size > size) {
      result = {
        size,
        note: formatNote(text, [...logLines, ...cosigned.values()]),
        cosigners: new Set(cosigned.keys()),
      };
    } else if (held && held.size === size) {
      // The same checkpoint: the union of what both carry.
      const previous = parseCheckpointNote(held.note);
      const lines = new Map<string, string>();
      if (typeof previous !== 'string') for (const s of previous.note.signatures) lines.set(s.line, s.line);
      for (const l of [...logLines, ...cosigned.values()]) lines.set(l, l);
      const cosigners = new Set([...held.cosigners, ...cosigned.keys()]);
      result = { size, note: formatNote(text, [...lines.values()]), cosigners };
      this.latest = result;
    } else {
      result = {
        size,
        note: formatNote(text, [...logLines, ...cosigned.values()]),
        cosigners: new Set(cosigned.keys()),
      };
      this.latest = result;
    }
    const best = this.witnessedHeld;
    const meets = this.threshold > 0 && result.cosigners.size >= this.threshold;
    if (meets && (!best || size > best.size || (size === best.size && result.cosigners.size >= best.cosigners.size))) {
      const before = best?.size ?? 0;
      this.witnessedHeld = result;
      if (this.onWitnessed) for (let h = before; h < size; h++) this.onWitnessed(h);
    }
    const status = held && held.size > size ? 'known' : 'kept';
    return { status, size, cosigners: [...result.cosigners] };
  }

  /** The checkpoint to serve: the latest the witness policy is met by, else the latest this node has. */
  current(): string | undefined {
    return (this.witnessedHeld ?? this.latest)?.note;
  }

  /** The latest checkpoint (log-signed, with whatever cosignatures it has). */
  get latestSize(): number {
    return this.latest?.size ?? 0;
  }

  /** Size of the latest checkpoint the policy is met by (0: none). */
  get witnessedSize(): number {
    return this.witnessedHeld?.size ?? 0;
  }

  /**
   * The witnessed part of a record's evidence: the latest checkpoint the policy is met by when it covers the block,
   * else the latest checkpoint that does; undefined when none covers it yet, and always undefined for a chain with no
   * witnesses: there the block's own certificate is the evidence, and a checkpoint would only add its signatures and
   * the membership blocks up to its tip (about 20 KB at 12 changes, and their checks) to every record's evidence.
   */
  evidence(height: number): CheckpointEvidence | undefined {
    if (this.witnesses.length === 0) return undefined;
    const held = [this.witnessedHeld, this.latest].find((h) => h !== undefined && h.size > height);
    if (!held) return undefined;
    const tip = this.chain.get(held.size - 1);
    if (!tip) return undefined;
    return checkpointEvidence({
      note: held.note,
      inclusion: this.chain.log.inclusion(height, held.size),
      tip,
      tipInclusion: this.chain.log.inclusion(held.size - 1, held.size),
      membership: this.chain.membershipBelow(tip).filter((m) => m.header.height >= height),
    });
  }

  /** GET /checkpoint/witnesses. */
  status(): WitnessStatusBody {
    const witnessed = this.witnessedSize;
    const first = this.witnesses.length > 0 && witnessed < this.size ? this.chain.get(witnessed) : undefined;
    return {
      origin: this.origin,
      size: this.size,
      threshold: this.threshold,
      witnessed_size: witnessed,
      unwitnessed_since: first ? first.header.timestamp : null,
      witnesses: this.witnesses.map((w) => ({
        name: w.endpoint.name,
        size: w.size,
        cosigned_at: w.cosignedAt,
        last_error: w.lastError,
        last_attempt: w.lastAttempt,
      })),
    };
  }
}
