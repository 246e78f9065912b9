// Witnessing, off the consensus path: once per interval one validator of the active set makes a checkpoint of its
// chain and has it witnessed. Whose turn it is comes from the clock: slot = floor(now / interval), and the slot's
// validator is the sorted active set's [slot mod N] (nodes a second apart on their clocks at worst both act, which
// the witnesses' 409 sorts out). A validator that is down loses its slots; the next one covers what it would have.
// The proposer of a block that changes the validator set also makes a checkpoint ending at that block at once, so
// every set change is in a checkpoint signed by the set that made it.
//
// A round: this validator's log signature and its peers' (POST /checkpoint/sign to the set active at the last
// block), until a quorum; then `add-checkpoint` to every witness with the consistency proof from the size it last
// cosigned (a 409 says which, and the request is made again from there); the cosignatures that verify are added,
// the book keeps the result, and the peers get it (POST /checkpoint/cosigned). Nothing here is awaited by consensus.
import {
  formatNote,
  logVerifierKey,
  type PeerSpec,
  parseNote,
  quorumSize,
  type Verify,
  verifyNoteSignature,
  type WitnessEndpoint,
} from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { Gossip } from '../network/gossip.ts';
import type { Transport } from '../network/transport.ts';
import type { ChainState } from '../node/chain-state.ts';
import type { CheckpointBook } from './book.ts';
import type { CheckpointMetrics } from './metrics.ts';
import type { WitnessClient } from './witness-client.ts';

export interface CoordinatorDeps {
  book: CheckpointBook;
  chain: ChainState;
  /** This node's public key. */
  self: string;
  /** The validators of the next height (who takes the slots). */
  validators: () => readonly string[];
  peers: () => PeerSpec[];
  transport: Transport;
  gossip: Gossip;
  witnesses: WitnessClient;
  intervalMs: number;
  verify: Verify;
  metrics: CheckpointMetrics;
  log: Logger;
  now?: () => number;
}

const SIGN_TIMEOUT_MS = 3000;

export class WitnessCoordinator {
  private readonly d: CoordinatorDeps;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private lastSlot = -1;
  private running: Promise<void> | undefined;
  private queued: number | undefined;
  private stopped = false;

  constructor(deps: CoordinatorDeps) {
    this.d = deps;
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), Math.max(25, Math.floor(this.d.intervalMs / 4)));
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** The slot's check: is it this validator's turn, and is there anything to witness? */
  tick(): void {
    const slot = Math.floor(this.now() / this.d.intervalMs);
    if (slot === this.lastSlot) return;
    this.lastSlot = slot;
    const set = [...this.d.validators()].sort();
    if (set.length === 0 || set[slot % set.length] !== this.d.self) return;
    const { book } = this.d;
    const size = book.size;
    // A checkpoint covers at least block 1: block 0 (the genesis) alone proves nothing.
    if (size < 2) return;
    const unwitnessed = book.endpoints.length > 0 && book.witnessedSize < size;
    if (book.latestSize < size || unwitnessed) this.request(size);
  }

  /** A finalized block: when this validator proposed it and it changes the set, its checkpoint at once. */
  onBlock(height: number, proposer: string, changes: number): void {
    if (changes > 0 && proposer === this.d.self) this.request(height + 1);
  }

  /** Runs a round for `size` now, or after the round under way (keeping the largest size asked for). */
  request(size: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.queued = Math.max(this.queued ?? 0, size);
      return;
    }
    this.running = this.round(size)
      .catch((err: unknown) => this.d.log.warn({ err, size }, 'checkpoint round failed'))
      .finally(() => {
        this.running = undefined;
        const next = this.queued;
        this.queued = undefined;
        if (next !== undefined) this.request(next);
      });
  }

  /** One round for the checkpoint of `size`; resolves when it is kept and sent to the peers (or failed). */
  async round(size: number): Promise<void> {
    const { book, chain, metrics } = this.d;
    const text = book.text(size);
    const signers = chain.activeSetAt(size - 1);
    const lines = await this.collectSignatures(size, text, signers);
    if (lines.length < quorumSize(signers.length)) {
      metrics.rounds.inc({ result: 'no_quorum' });
      this.d.log.debug(
        { size, signatures: lines.length, of: signers.length },
        'checkpoint round: no quorum of signatures',
      );
      return;
    }
    const logSigned = formatNote(text, lines);
    const cosignatures = (await Promise.all(book.endpoints.map((w) => this.submit(w, logSigned, size)))).flat();
    const note = formatNote(text, [...lines, ...cosignatures]);
    const kept = book.accept(note);
    if (kept.status !== 'kept' && kept.status !== 'known') {
      this.d.log.error({ size, result: kept }, 'checkpoint round: this node refused its own checkpoint');
      return;
    }
    metrics.rounds.inc({
      result: kept.cosigners.length >= book.threshold && book.threshold > 0 ? 'cosigned' : 'signed',
    });
    this.d.gossip.sendRaw('/checkpoint/cosigned', JSON.stringify({ note: book.current() }), this.d.peers());
  }

  /** This validator's line and its peers', until a quorum of `signers` answered or every request ended. */
  private async collectSignatures(size: number, text: string, signers: readonly string[]): Promise<string[]> {
    const { book, self } = this.d;
    const origin = book.origin;
    const members = new Set(signers);
    const quorum = quorumSize(members.size);
    const got = new Map<string, string>();
    if (members.has(self)) got.set(self, book.sign(size));
    const others = this.d.peers().filter((p) => members.has(p.publicKey));
    if (got.size >= quorum || others.length === 0) return [...got.values()];
    await new Promise<void>((resolve) => {
      let pending = others.length;
      const done = () => {
        pending--;
        if (got.size >= quorum || pending === 0) resolve();
      };
      for (const peer of others) {
        this.d.transport
          .post(peer, '/checkpoint/sign', { size }, SIGN_TIMEOUT_MS)
          .then((res) => {
            const line = (res.body as { line?: unknown } | null)?.line;
            if (res.status !== 200 || typeof line !== 'string') return;
            const note = parseNote(formatNote(text, [line]));
            const sig = typeof note === 'string' ? undefined : note.signatures[0];
            if (sig && verifyNoteSignature(logVerifierKey(origin, peer.publicKey), text, sig, this.d.verify))
              got.set(peer.publicKey, sig.line);
          })
          .catch(() => undefined)
          .finally(done);
      }
    });
    return [...got.values()];
  }

  /** add-checkpoint to one witness; its cosignature lines (none when it refused or was unreachable). */
  private async submit(w: WitnessEndpoint, note: string, size: number): Promise<string[]> {
    const { book, chain, metrics } = this.d;
    let old = book.witnessSize(w.name);
    for (let attempt = 0; attempt < 3; attempt++) {
      const at = this.now();
      if (old > size) {
        book.recordAttempt(w.name, at, `the witness holds a checkpoint of size ${old}, beyond ${size}`);
        return [];
      }
      const proof = old === 0 || old === size ? [] : chain.log.consistency(old, size);
      const answer = await this.d.witnesses.addCheckpoint(w.url, { oldSize: old, proof, checkpoint: note });
      switch (answer.kind) {
        case 'cosigned':
          metrics.witnessRequests.inc({ witness: w.name, result: 'cosigned' });
          book.recordAttempt(w.name, at, null);
          return answer.lines;
        case 'size':
          metrics.witnessRequests.inc({ witness: w.name, result: 'size' });
          if (answer.size === old) {
            book.recordAttempt(w.name, at, `the witness holds another checkpoint of size ${old} (409)`);
            return [];
          }
          book.recordAttempt(w.name, at, null, answer.size);
          old = answer.size;
          break;
        case 'refused': {
          metrics.witnessRequests.inc({ witness: w.name, result: `refused_${answer.status}` });
          const why =
            answer.status === 422
              ? `the witness refuses: checkpoint ${size} is not consistent with the checkpoint of size ${old} it cosigned`
              : `the witness refuses (HTTP ${answer.status})`;
          book.recordAttempt(w.name, at, `${why}${answer.message ? `: ${answer.message}` : ''}`);
          this.d.log.warn(
            { witness: w.name, size, old, status: answer.status, message: answer.message },
            'witness refused a checkpoint',
          );
          return [];
        }
        case 'unreachable':
          metrics.witnessRequests.inc({ witness: w.name, result: 'unreachable' });
          book.recordAttempt(w.name, at, `unreachable: ${answer.message}`);
          return [];
      }
    }
    return [];
  }
}
