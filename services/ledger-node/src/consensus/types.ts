/**
 * The engine's public contract. The engine is a pure, deterministic state machine:
 * `engine.step(event) → actions`. It performs no I/O, reads no clock and keeps no timers; the
 * driver (node/driver.ts, or the simulator) executes the actions IN ORDER.
 *
 * PERSISTENCE RULE: a `persist` action MUST be durably written (fsync) before the driver executes
 * any later `broadcast` of the same action list. The state is plain JSON. After a restart, create
 * the engine with that state (`createEngine(config, state)`) and send `start` for the same height:
 * the engine then never signs a different value for a (height, round) it already signed.
 */
import type {
  Block,
  CommitMessage,
  ConsensusMessage,
  PrePrepareMessage,
  PrepareMessage,
  RoundChangeMessage,
  Verify,
} from '@scriptorium/ledger-protocol';
import type { RejectReason } from './gate.ts';

/** What the engine needs to know about a height; build it with `heightContextAfter(tip, timeline)`. */
export interface HeightContext {
  height: number;
  /** Hash of the block at height − 1 (the parent every proposal must name). */
  parentHash: string;
  /** The `prev_membership_height` every proposal must carry (`membershipPointerAfter` of the parent). */
  prevMembershipHeight: number;
  /** The set active at `height`, sorted (ValidatorTimeline.at(height)). */
  validators: readonly string[];
  /**
   * Index of the previous block's proposer in the set active at height − 1; −1 at height 1.
   * Proposer of (height, round) = validators[(prevProposerIndex + 1 + round) mod N].
   */
  prevProposerIndex: number;
}

export interface EngineConfig {
  chainId: string;
  /** This node's public key (64 hex). */
  self: string;
  /** Signs bytes with this node's private key (e.g. `createSigner(priv).sign`). Ed25519 is deterministic. */
  sign: (message: Uint8Array) => string;
  /** Signature check; defaults to node:crypto `verifySignature` (uncached: the node passes its `cachedVerify`). */
  verify?: Verify;
  /** Round r times out after min(baseTimeoutMs × 2^r, maxTimeoutMs). */
  baseTimeoutMs: number;
  /** Cap on a round's timeout (default baseTimeoutMs × 2^6): bounds the stall after a long outage. */
  maxTimeoutMs?: number;
  /**
   * Application check of a proposed block beyond consensus structure (records, changes, timestamp).
   * Return null when acceptable, or a reason. Default: accept.
   */
  checkProposal?: (block: Block) => string | null;
}

/** Events the driver feeds in, one at a time. */
export type EngineEvent =
  /**
   * Begin (or resume) consensus at ctx.height. Send it at start-up, after every `finalize`
   * (once the block is stored), and after a block for the current height or above arrived by sync.
   * A start for a height at or below a decided/current one is ignored, except to resume a restored state.
   */
  | { type: 'start'; ctx: HeightContext }
  /** A parsed (zod) consensus message from a peer; the engine verifies every signature itself. */
  | { type: 'message'; msg: ConsensusMessage }
  /** A timer set by `schedule-timeout` fired. Stale timers are ignored. */
  | { type: 'timeout'; height: number; round: number }
  /** Answer to `request-proposal`: a block built with `buildBlock` (no seals). */
  | { type: 'proposal-ready'; height: number; round: number; block: Block };

/** What a persisted engine state holds: enough to never sign two values for one height and round. */
export interface PersistedState {
  version: 1;
  height: number;
  round: number;
  /** The lock: the highest round this node saw prepared, with the block and its prepared certificate. */
  locked: { round: number; block: Block; prepares: PrepareMessage[] } | null;
  /** Messages this node already signed in `round` (re-sent as-is after a restart). */
  sent: {
    proposal: PrePrepareMessage | null;
    prepare: PrepareMessage | null;
    commit: CommitMessage | null;
    roundChange: RoundChangeMessage | null;
  };
}

/** Actions for the driver, executed in order. */
export type EngineAction =
  /** Durably store the state before executing any later action of this list. */
  | { type: 'persist'; state: PersistedState }
  /** Send a signed message to every validator peer (the engine already processed it itself). */
  | { type: 'broadcast'; msg: ConsensusMessage }
  /** Arrange a `timeout` event for (height, round) after afterMs. */
  | { type: 'schedule-timeout'; height: number; round: number; afterMs: number }
  /** This node proposes at (height, round): build a block and answer with `proposal-ready`. */
  | { type: 'request-proposal'; height: number; round: number }
  /** The height is decided: `block` carries its commit seals. Store it, then `start` the next height. */
  | { type: 'finalize'; block: Block; round: number }
  /**
   * A message was refused (by the gate or by a content check): count it under `reason`, log `detail` at
   * debug level. Nothing else to do.
   */
  | {
      type: 'reject';
      reason: RejectReason;
      detail: string;
      msg: Pick<ConsensusMessage, 'type' | 'height' | 'round' | 'author'>;
    };

export interface EngineStatus {
  height: number;
  round: number;
  decided: boolean;
  running: boolean;
  proposer: string | null;
  lockedRound: number | null;
  /** Messages buffered for future heights. */
  buffered: number;
}

export interface Engine {
  step(event: EngineEvent): EngineAction[];
  status(): EngineStatus;
}
