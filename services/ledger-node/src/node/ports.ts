// The node's ports: every interface between the node's logic (the consensus driver, the block applier, the sync
// step) and what lies outside memory. Production implements them in system-ports.ts (the system clock and
// timers, HTTP(S) to the peers) and storage/ (the WAL files); the simulator (sim/) implements them with its
// clock, its network and a memory "disk" that survives crashes, and runs the same logic on them.
import type { Block, ConsensusMessage } from '@scriptorium/ledger-protocol';
import type { PersistedState } from '../consensus/index.ts';

export type { BlockStorage } from '../storage/index.ts';

/** Wall-clock time in ms since the epoch (block timestamps and the proposal clock-skew check). */
export interface Clock {
  now(): number;
}

/** One-shot timers; `after` returns a function that cancels the timer. */
export interface Timers {
  after(ms: number, fn: () => void): () => void;
}

/** The durable consensus state (lock and "already sent" votes). `save` returns only once it is durable. */
export interface ConsensusStateStore {
  load(): unknown;
  save(state: PersistedState): void;
  close(): void;
}

/** Where consensus traffic goes. Both calls are fire-and-forget. */
export interface ConsensusNetwork {
  /** Sends a signed message to the peers whose public keys are in `to`. */
  broadcast(msg: ConsensusMessage, to: ReadonlySet<string>): void;
  /** Pushes a finalized block to every peer whose key is not in `except`. */
  pushBlock(block: Block, except: ReadonlySet<string>): void;
}

/** A peer as pull sync knows it (PeerSpec in production). */
export interface SyncPeer {
  readonly publicKey: string;
  readonly nodeId: string;
}

/**
 * Pull sync's network: a peer's height (GET /chain) and one of its blocks (GET /blocks/{height}). Each call
 * answers exactly once through `done`, later (never inside the call): undefined when the peer did not answer in
 * time or not usefully.
 */
export interface SyncNetwork<P extends SyncPeer = SyncPeer> {
  peers(): readonly P[];
  height(peer: P, done: (height: number | undefined) => void): void;
  block(peer: P, height: number, done: (body: unknown) => void): void;
}

/** Structured logging, as pino's Logger does it. */
export interface Log {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The metrics the driver keeps (prom-client's Gauge and Counter fit; the simulator counts in memory). */
export interface DriverMetrics {
  round: { set(value: number): void };
  roundChanges: { inc(value?: number): void };
  isValidator: { set(value: number): void };
  messagesOut: { inc(labels: { type: string }): void };
  rejectedMessages: { inc(labels: { reason: string }): void };
}

/** The metrics the block applier keeps. */
export interface ApplierMetrics {
  height: { set(value: number): void };
  isValidator: { set(value: number): void };
  recordsFinalized: { inc(value?: number): void };
  mempoolSize: { set(value: number): void };
  finalityLatency: { observe(seconds: number): void };
}
