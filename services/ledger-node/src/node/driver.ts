// The consensus driver: one input loop around the pure engine (src/consensus). It takes peer messages
// (from the node's bounded inbound queue), its own follow-up events, timeouts and proposal answers one at
// a time, and executes the engine's actions in order:
//   persist   → the state store (a framed WAL record, fsync), before any later action of the same list (no
//               equivocation after a restart: the engine is rebuilt from that state);
//   broadcast → the network, to the peers that are validators at that height;
//   schedule-timeout → a timer that feeds `timeout` back into the loop;
//   request-proposal → a block from the mempool and pending validator changes (`proposal-ready`);
//   finalize  → store the block (fsync), prune the mempool, push it to peers, start the next height;
//   reject    → the refusal's reason on scriptorium_ledger_rejected_messages_total, its detail at debug level.
// Role: the engine runs only while this node's key is in the active set of the next height; when a
// finalized block removes it the node becomes a passive follower (sync only), and back when added.
//
// Everything the driver touches outside memory is a port (DriverPorts): the clock, timers, the consensus
// state store and the network. The node supplies the real ones (node/ports.ts); the simulator (sim/) supplies
// deterministic ones and runs this same driver.
import {
  type Block,
  buildBlock,
  type ConsensusMessage,
  MAX_CHANGES_PER_BLOCK,
  membershipPointerAfter,
  sha256Hex,
  type Verify,
} from '@scriptorium/ledger-protocol';
import type { Signer } from '@scriptorium/ledger-protocol/keys';
import {
  type Admission,
  admit,
  createEngine,
  type Engine,
  type EngineAction,
  type EngineEvent,
  heightContextAfter,
  type PersistedState,
  parsePersistedState,
  type RejectReason,
} from '../consensus/index.ts';
import { NodeError } from '../errors.ts';
import type { Mempool } from '../mempool/index.ts';
import type { ChainState } from './chain-state.ts';

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

export interface DriverPorts {
  clock: Clock;
  timers: Timers;
  stateStore: ConsensusStateStore;
  network: ConsensusNetwork;
}

/** Structured logging, as pino's Logger does it. */
export interface DriverLog {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
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

export interface DriverSettings {
  /** Base round timeout; round r waits min(base × 2^r, maxTimeoutMs). */
  roundTimeoutMs: number;
  /** Cap on a round's timeout (the engine's default, base × 2^6, when absent). */
  maxTimeoutMs?: number;
  /**
   * Batching: a proposer proposes this long after records (or validator changes) are pending — after it was
   * asked for a block when they already were, else after the first arrived — and records arriving meanwhile join
   * the block (up to its limits). 0 = at once. NODE_CONSENSUS__BLOCK_DELAY_MS, a LedgerCluster's
   * `consensus.blockIntervalMs`.
   */
  blockDelayMs: number;
  /**
   * An idle chain (no records or validator changes pending) proposes an empty block this long after the
   * height opened; 0 = never (a block only when work arrives). Like CometBFT's create_empty_blocks_interval
   * and Besu's empty block period. Round timers run only while the chain is busy (below).
   */
  emptyBlockIntervalMs: number;
  maxBlockRecords: number;
  maxBlockBytes: number;
}

export interface DriverDeps extends DriverPorts {
  signer: Signer;
  chain: ChainState;
  mempool: Mempool;
  /** Ed25519 verification (memoized here; the simulator shares one memo between its nodes). */
  verify: Verify;
  /** Applies a block this driver finalized: append it durably, prune the mempool, update metrics. */
  commit(block: Block): void;
  settings: DriverSettings;
  metrics: DriverMetrics;
  log: DriverLog;
}

/** What the node (or the simulator) asks of the driver. */
export interface ConsensusDriver {
  /** The gate's door for an untrusted POST /consensus body: shape, chain id, sender, signature. */
  admit(body: unknown): Admission;
  /** An admitted message, taken from the inbound queue one at a time. */
  onMessage(msg: ConsensusMessage): void;
  /** The chain grew by a block this driver did not finalize (push or pull). */
  onExternalCommit(): void;
  /** New records or validator changes arrived in the mempool (a waiting proposer may propose now). */
  onMempool(): void;
  /** Evaluates the role (validator/follower) and starts the engine when this node is a validator. */
  start(): void;
  stop(): void;
  /** Current round at the open height (metrics, /ui). */
  readonly round: number;
  /** This node runs the engine (it is in the active set of the next height). */
  readonly isValidator: boolean;
}

const VERIFIED_CACHE_MAX = 200_000;
/** Clock skew tolerated on a proposal's timestamp. */
const MAX_FUTURE_MS = 30_000;

/**
 * Wraps `verify` with a memo of good signatures, so a message checked at the door is not checked again by the
 * engine (keyed by key, signature and a hash of the signed bytes).
 */
function memoizeVerify(verify: Verify): Verify {
  const verified = new Set<string>();
  return (pk, bytes, sig) => {
    const key = `${pk}${sig}${sha256Hex(bytes)}`;
    if (verified.has(key)) return true;
    const ok = verify(pk, bytes, sig);
    if (ok) {
      if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
      verified.add(key);
    }
    return ok;
  };
}

/**
 * How long a proposer asked for a block waits before building it: with work pending, the batching delay;
 * after a round change, at once (the chain was busy: that is why the round changed); when idle, until the
 * empty-block interval has passed since the height opened, or (interval 0) until work arrives: undefined.
 */
export function proposalDelayMs(
  hasWork: boolean,
  round: number,
  openForMs: number,
  settings: Pick<DriverSettings, 'blockDelayMs' | 'emptyBlockIntervalMs'>,
): number | undefined {
  if (hasWork) return settings.blockDelayMs;
  if (round > 0) return 0;
  if (settings.emptyBlockIntervalMs === 0) return undefined;
  return Math.max(0, settings.emptyBlockIntervalMs - openForMs);
}

/**
 * When a round timer that fires at `now` may count: a round's time runs only while the chain is busy,
 * from the moment it became busy (work arrived, or the empty-block interval passed). Returns 0 to let the
 * timeout through, or how much longer to wait. An idle chain never changes rounds; a proposer that stays
 * silent while work is pending is replaced after a full round timeout.
 */
export function roundTimerWait(now: number, afterMs: number, busySince: number | undefined): number {
  if (busySince === undefined || busySince > now) return afterMs;
  return Math.max(0, busySince + afterMs - now);
}

export function createDriver(deps: DriverDeps): ConsensusDriver {
  const { chain, mempool, metrics, log, clock, timers, stateStore, network, settings } = deps;
  const self = deps.signer.publicKey;
  const verify = memoizeVerify(deps.verify);

  let engine: Engine | undefined;
  let running = false;
  let currentRound = 0;
  let currentHeight = -1;
  const roundTimers = new Map<string, () => void>();
  /**
   * The proposal this node was asked for and has not built yet: `batching` once records or changes are pending
   * (the batching delay runs), false while an idle proposer waits for work or the empty-block interval (`dueAt`,
   * undefined: no interval).
   */
  let pendingProposal:
    | { height: number; round: number; cancel: (() => void) | undefined; batching: boolean; dueAt: number | undefined }
    | undefined;
  /** When the open height opened, and when work (records, validator changes) was first seen pending at it. */
  let openedHeight = -1;
  let openedAt = clock.now();
  let workSince: number | undefined;
  const hasWork = () => mempool.size > 0 || mempool.pendingChanges > 0;
  /** Since when the chain is busy at this height (undefined: idle, no interval running out). */
  function busySince(): number | undefined {
    if (hasWork()) workSince ??= clock.now();
    const intervalAt =
      settings.emptyBlockIntervalMs > 0 ? openedAt + settings.emptyBlockIntervalMs : Number.POSITIVE_INFINITY;
    const since = Math.min(workSince ?? Number.POSITIVE_INFINITY, intervalAt);
    return Number.isFinite(since) && since <= clock.now() ? since : undefined;
  }
  const events: EngineEvent[] = [];
  let looping = false;

  const checkProposal = (block: Block): string | null => {
    for (const r of block.records) if (chain.isCommitted(r.id)) return `record ${r.id} already committed`;
    if (block.header.timestamp > clock.now() + MAX_FUTURE_MS) return 'timestamp in the future';
    const parent = chain.get(block.header.height - 1);
    if (parent && block.header.timestamp < parent.header.timestamp) return 'timestamp before the parent';
    return null;
  };

  function refused(reason: RejectReason, detail: string, msg?: Pick<ConsensusMessage, 'type' | 'height' | 'round'>) {
    metrics.rejectedMessages.inc({ reason });
    log.debug({ reason, detail, type: msg?.type, height: msg?.height, round: msg?.round }, 'consensus message refused');
  }

  function newEngine(): Engine {
    // A state that passed its CRC but not the schema is refused: never guess about what was signed.
    let saved: PersistedState | undefined;
    try {
      const raw = stateStore.load();
      saved = raw === undefined ? undefined : parsePersistedState(raw);
    } catch (err) {
      throw new NodeError(
        'storage_corrupt',
        `consensus-state.wal holds an invalid state: ${(err as Error).message.slice(0, 200)}`,
      );
    }
    return createEngine(
      {
        chainId: chain.chainId,
        self,
        sign: deps.signer.sign,
        verify,
        baseTimeoutMs: settings.roundTimeoutMs,
        ...(settings.maxTimeoutMs !== undefined ? { maxTimeoutMs: settings.maxTimeoutMs } : {}),
        checkProposal,
      },
      saved && saved.height >= chain.height + 1 ? saved : null,
    );
  }

  /** The single input loop: events are handled strictly one after another. */
  function dispatch(event: EngineEvent): void {
    events.push(event);
    if (looping) return;
    looping = true;
    try {
      while (events.length > 0) {
        const next = events.shift() as EngineEvent;
        if (!engine) continue;
        let actions: EngineAction[];
        try {
          actions = engine.step(next);
        } catch (err) {
          log.error({ err, event: next.type }, 'engine step failed');
          continue;
        }
        execute(actions);
        observeStatus();
      }
    } finally {
      looping = false;
    }
  }

  function observeStatus(): void {
    if (!engine) return;
    const status = engine.status();
    if (status.height === currentHeight && status.round > currentRound)
      metrics.roundChanges.inc(status.round - currentRound);
    currentHeight = status.height;
    currentRound = status.round;
    metrics.round.set(status.round);
  }

  function execute(actions: EngineAction[]): void {
    let finalized = false;
    // One step may persist twice (the proposer: its PRE-PREPARE, then its own PREPARE). The states of
    // one step only grow (same height, rounds never go back, `sent` and the lock only gain), so the
    // last one covers every earlier one: it is written once, at the first persist, and therefore
    // still before every message of the list leaves. One fsync per step instead of one per persist.
    // (Defensive: states of different heights are written one by one, as listed.)
    const states: PersistedState[] = [];
    for (const a of actions) if (a.type === 'persist') states.push(a.state);
    const last = states.at(-1);
    const coalesce = last !== undefined && states.every((st) => st.height === last.height && st.round <= last.round);
    let persisted = false;
    for (const action of actions) {
      switch (action.type) {
        case 'persist':
          if (!coalesce)
            stateStore.save(action.state); // durable before anything after it
          else if (!persisted) stateStore.save(last);
          persisted = true;
          break;
        case 'broadcast':
          broadcast(action.msg);
          break;
        case 'schedule-timeout':
          scheduleTimeout(action.height, action.round, action.afterMs);
          break;
        case 'request-proposal':
          requestProposal(action.height, action.round);
          break;
        case 'finalize':
          finalized = finalize(action.block) || finalized;
          break;
        case 'reject':
          refused(action.reason, action.detail, action.msg);
          break;
      }
    }
    if (finalized) afterHeightChange();
  }

  function broadcast(msg: ConsensusMessage): void {
    metrics.messagesOut.inc({ type: msg.type });
    network.broadcast(msg, new Set(chain.activeSetAt(Math.min(msg.height, chain.height + 1))));
  }

  function scheduleTimeout(height: number, round: number, afterMs: number, waitMs = afterMs): void {
    const key = `${height}:${round}`;
    roundTimers.get(key)?.();
    roundTimers.set(
      key,
      timers.after(waitMs, () => {
        roundTimers.delete(key);
        // Round 0 counts only while the chain is busy (later rounds exist because it was).
        const more = round === 0 ? roundTimerWait(clock.now(), afterMs, busySince()) : 0;
        if (more > 0) scheduleTimeout(height, round, afterMs, more);
        else dispatch({ type: 'timeout', height, round });
      }),
    );
  }

  function clearTimersUpTo(height: number): void {
    for (const [key, cancel] of roundTimers) {
      if (Number(key.split(':')[0]) <= height) {
        cancel();
        roundTimers.delete(key);
      }
    }
  }

  function cancelPendingProposal(): void {
    pendingProposal?.cancel?.();
    pendingProposal = undefined;
  }

  function requestProposal(height: number, round: number): void {
    if (height !== chain.height + 1) return;
    cancelPendingProposal();
    const work = hasWork();
    const wait = proposalDelayMs(work, round, clock.now() - openedAt, settings);
    pendingProposal = {
      height,
      round,
      cancel: undefined,
      batching: work,
      dueAt: wait === undefined ? undefined : clock.now() + wait,
    };
    schedulePending(wait);
  }

  function schedulePending(wait: number | undefined): void {
    if (!pendingProposal) return;
    pendingProposal.cancel?.();
    pendingProposal.cancel = undefined;
    if (wait === 0) proposeNow();
    else if (wait !== undefined) pendingProposal.cancel = timers.after(wait, proposeNow);
  }

  /**
   * Work arrived while the proposer waited idle: the block is built once the batching delay has passed since
   * then (or when the empty-block interval runs out, if that is sooner), so records arriving together share a
   * block. Work arriving while the batching delay already runs changes nothing.
   */
  function startBatching(): void {
    const p = pendingProposal;
    if (!p || p.batching) return;
    p.batching = true;
    const now = clock.now();
    const wait = Math.min(settings.blockDelayMs, p.dueAt === undefined ? Number.POSITIVE_INFINITY : p.dueAt - now);
    p.dueAt = now + Math.max(0, wait);
    schedulePending(Math.max(0, wait));
  }

  function proposeNow(): void {
    const p = pendingProposal;
    if (!p) return;
    cancelPendingProposal();
    if (!engine || p.height !== chain.height + 1) return;
    const parent = chain.tip();
    const block = buildBlock({
      chainId: chain.chainId,
      height: p.height,
      parentHash: chain.tipHash,
      prevMembershipHeight: membershipPointerAfter(parent.header),
      proposer: self,
      timestamp: Math.max(clock.now(), parent.header.timestamp),
      records: mempool.take(settings.maxBlockRecords, settings.maxBlockBytes),
      changes: mempool.takeChanges(chain.activeSetAt(p.height), MAX_CHANGES_PER_BLOCK),
    });
    dispatch({ type: 'proposal-ready', height: p.height, round: p.round, block });
  }

  /**
   * Stores an engine-finalized block; false when the chain already moved past it (push/pull won).
   * The engine validated the proposal's body when it accepted it, so only the link and the
   * finality certificate are re-checked here (no second schema parse and Merkle pass).
   */
  function finalize(block: Block): boolean {
    if (block.header.height !== chain.height + 1) return false;
    const verdict = chain.verifyFinalized(block);
    if (!verdict.ok) {
      log.error(
        { height: block.header.height, reason: verdict.reason },
        'engine finalized a block that does not verify',
      );
      return false;
    }
    deps.commit(block);
    // Every validator finalizes this block from its own COMMIT quorum at about the same time, so a
    // push from each of them to each other is N × (N − 1) copies of a large body for nothing. The
    // proposer pushes to everyone (a validator that missed the quorum gets it at once); the others
    // push only to followers. A validator that misses both catches up by pull sync, which a
    // consensus message of a later height starts at once.
    const validators = new Set(chain.activeSetAt(block.header.height));
    network.pushBlock(block, block.header.proposer === self ? new Set() : validators);
    return true;
  }

  /** After the chain grew: drop stale timers, re-check the role, start the next height. */
  function afterHeightChange(): void {
    if (chain.height !== openedHeight) {
      openedHeight = chain.height;
      openedAt = clock.now();
      workSince = hasWork() ? openedAt : undefined;
    }
    clearTimersUpTo(chain.height);
    if (pendingProposal && pendingProposal.height <= chain.height) cancelPendingProposal();
    if (!running) return;
    const validator = chain.activeSetAt(chain.height + 1).includes(self);
    if (validator && !engine) {
      engine = newEngine();
      log.info({ height: chain.height + 1 }, 'role: validator');
    } else if (!validator && engine) {
      engine = undefined;
      for (const cancel of roundTimers.values()) cancel();
      roundTimers.clear();
      log.info({ height: chain.height + 1 }, 'role: passive follower');
    }
    metrics.isValidator.set(validator ? 1 : 0);
    if (engine) dispatch({ type: 'start', ctx: heightContextAfter(chain.tip(), chain.timeline) });
  }

  return {
    admit(body) {
      const admission = admit(body, chain, verify);
      if (!admission.ok) refused(admission.reason, admission.detail);
      return admission;
    },
    onMessage(msg) {
      if (!engine) {
        refused('not_validator', 'this node is a passive follower', msg);
        return;
      }
      dispatch({ type: 'message', msg });
    },
    onExternalCommit() {
      afterHeightChange();
    },
    onMempool() {
      if (!hasWork()) return;
      workSince ??= clock.now();
      if (pendingProposal && engine) startBatching();
    },
    start() {
      running = true;
      afterHeightChange();
    },
    stop() {
      running = false;
      engine = undefined;
      for (const cancel of roundTimers.values()) cancel();
      roundTimers.clear();
      cancelPendingProposal();
      stateStore.close();
    },
    get round() {
      return currentRound;
    },
    get isValidator() {
      return engine !== undefined;
    },
  };
}
