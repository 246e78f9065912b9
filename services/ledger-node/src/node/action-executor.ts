// The action executor: carries out the engine's actions of one step, in order, on the driver's ports:
//   persist          → the state store (a framed WAL record, fsync), before any later action of the same list (no
//                      equivocation after a restart: the engine is rebuilt from that state);
//   broadcast        → the network, to the peers that are validators at that height;
//   schedule-timeout → a round timer that feeds `timeout` back into the driver's loop (round 0 counts only while
//                      the chain is busy);
//   request-proposal → the proposal scheduler;
//   finalize         → the link and certificate re-checked, the block applier (store, mempool, …), a push to peers;
//   reject           → the refusal's reason on scriptorium_ledger_rejected_messages_total, its detail at debug level.
import type { Block, ConsensusMessage } from '@scriptorium/ledger-protocol';
import type { EngineAction, PersistedState, RejectReason } from '../consensus/index.ts';
import type { ChainState } from './chain-state.ts';
import type { ConsensusNetwork, ConsensusStateStore, DriverMetrics, Log, Timers } from './ports.ts';
import { type ProposalScheduler, roundTimerWait } from './proposal-scheduler.ts';

export interface ExecutorDeps {
  self: string;
  chain: ChainState;
  stateStore: ConsensusStateStore;
  network: ConsensusNetwork;
  timers: Timers;
  clock: { now(): number };
  metrics: DriverMetrics;
  log: Pick<Log, 'debug' | 'error'>;
  scheduler: ProposalScheduler;
  /** Applies a block this node's engine finalized (the block applier, origin `consensus`). */
  commit(block: Block): void;
  /** A round timer fired and counts: the driver feeds `timeout` to the engine. */
  timeout(height: number, round: number): void;
}

export class ActionExecutor {
  readonly #deps: ExecutorDeps;
  readonly #roundTimers = new Map<string, () => void>();

  constructor(deps: ExecutorDeps) {
    this.#deps = deps;
  }

  /** Executes one step's actions in order; true when a block was finalized (the next height starts). */
  execute(actions: readonly EngineAction[]): boolean {
    const { stateStore } = this.#deps;
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
          this.#broadcast(action.msg);
          break;
        case 'schedule-timeout':
          this.#scheduleTimeout(action.height, action.round, action.afterMs);
          break;
        case 'request-proposal':
          this.#deps.scheduler.request(action.height, action.round);
          break;
        case 'finalize':
          finalized = this.#finalize(action.block) || finalized;
          break;
        case 'reject':
          this.refused(action.reason, action.detail, action.msg);
          break;
      }
    }
    return finalized;
  }

  /** A refused message: the metric by reason, the detail at debug level. */
  refused(reason: RejectReason, detail: string, msg?: Pick<ConsensusMessage, 'type' | 'height' | 'round'>): void {
    this.#deps.metrics.rejectedMessages.inc({ reason });
    this.#deps.log.debug(
      { reason, detail, type: msg?.type, height: msg?.height, round: msg?.round },
      'consensus message refused',
    );
  }

  /** Cancels the round timers of heights up to `height` (all of them without one). */
  clearTimers(height = Number.POSITIVE_INFINITY): void {
    for (const [key, cancel] of this.#roundTimers) {
      if (Number(key.split(':')[0]) <= height) {
        cancel();
        this.#roundTimers.delete(key);
      }
    }
  }

  #broadcast(msg: ConsensusMessage): void {
    const { chain, metrics, network } = this.#deps;
    metrics.messagesOut.inc({ type: msg.type });
    network.broadcast(msg, new Set(chain.activeSetAt(Math.min(msg.height, chain.height + 1))));
  }

  #scheduleTimeout(height: number, round: number, afterMs: number, waitMs = afterMs): void {
    const { timers, clock, scheduler } = this.#deps;
    const key = `${height}:${round}`;
    this.#roundTimers.get(key)?.();
    this.#roundTimers.set(
      key,
      timers.after(waitMs, () => {
        this.#roundTimers.delete(key);
        // Round 0 counts only while the chain is busy (later rounds exist because it was).
        const more = round === 0 ? roundTimerWait(clock.now(), afterMs, scheduler.busySince()) : 0;
        if (more > 0) this.#scheduleTimeout(height, round, afterMs, more);
        else this.#deps.timeout(height, round);
      }),
    );
  }

  /**
   * Applies an engine-finalized block; false when the chain already moved past it (push/pull won).
   * The engine validated the proposal's body when it accepted it, so only the link and the
   * finality certificate are re-checked here (no second schema parse and Merkle pass).
   */
  #finalize(block: Block): boolean {
    const { chain, log, network, self } = this.#deps;
    if (block.header.height !== chain.height + 1) return false;
    const verdict = chain.verifyFinalized(block);
    if (!verdict.ok) {
      log.error(
        { height: block.header.height, reason: verdict.reason },
        'engine finalized a block that does not verify',
      );
      return false;
    }
    this.#deps.commit(block);
    // Every validator finalizes this block from its own COMMIT quorum at about the same time, so a
    // push from each of them to each other is N × (N − 1) copies of a large body for nothing. The
    // proposer pushes to everyone (a validator that missed the quorum gets it at once); the others
    // push only to followers. A validator that misses both catches up by pull sync, which a
    // consensus message of a later height starts at once.
    const validators = new Set(chain.activeSetAt(block.header.height));
    network.pushBlock(block, block.header.proposer === self ? new Set() : validators);
    return true;
  }
}
