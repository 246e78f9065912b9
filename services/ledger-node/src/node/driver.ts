// The consensus driver: one input loop around the pure engine (src/consensus). It takes peer messages (from
// the node's bounded inbound queue), its own follow-up events, timeouts and proposals one at a time, feeds
// each to `engine.step` and hands the actions to the action executor (action-executor.ts: persist before send,
// broadcast, round timers, finalize through the block applier, refusals); the proposal scheduler
// (proposal-scheduler.ts) decides when this node, as proposer, builds its block.
// Role: the engine runs only while this node's key is in the active set of the next height; when a
// finalized block removes it the node becomes a passive follower (sync only), and back when added.
//
// Everything the driver touches outside memory is a port (ports.ts): the clock, timers, the consensus state
// store and the network. The node supplies the real ones (system-ports.ts, storage/); the simulator (sim/)
// supplies deterministic ones and runs this same driver.
import type { Block, ConsensusMessage, Verify } from '@scriptorium/ledger-protocol';
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
} from '../consensus/index.ts';
import { NodeError } from '../errors.ts';
import type { Mempool } from '../mempool/index.ts';
import { ActionExecutor } from './action-executor.ts';
import type { ChainState } from './chain-state.ts';
import type { Clock, ConsensusNetwork, ConsensusStateStore, DriverMetrics, Log, Timers } from './ports.ts';
import { ProposalScheduler, type ProposalSettings } from './proposal-scheduler.ts';

export interface DriverPorts {
  clock: Clock;
  timers: Timers;
  stateStore: ConsensusStateStore;
  network: ConsensusNetwork;
}

export interface DriverSettings extends ProposalSettings {
  /** Base round timeout; round r waits min(base × 2^r, maxTimeoutMs). */
  roundTimeoutMs: number;
  /** Cap on a round's timeout (the engine's default, base × 2^6, when absent). */
  maxTimeoutMs?: number;
}

export interface DriverDeps extends DriverPorts {
  signer: Signer;
  chain: ChainState;
  mempool: Mempool;
  /** Signature checks for the gate's door and the engine: pass the node's one cache (consensus `cachedVerify`). */
  verify: Verify;
  /** Applies a block this driver finalized (the block applier, origin `consensus`). */
  commit(block: Block): void;
  settings: DriverSettings;
  metrics: DriverMetrics;
  log: Pick<Log, 'debug' | 'info' | 'error'>;
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

/** Clock skew tolerated on a proposal's timestamp. */
const MAX_FUTURE_MS = 30_000;

export function createDriver(deps: DriverDeps): ConsensusDriver {
  const { chain, metrics, log, clock, stateStore, settings, verify } = deps;
  const self = deps.signer.publicKey;

  let engine: Engine | undefined;
  let running = false;
  let currentRound = 0;
  let currentHeight = -1;
  const events: EngineEvent[] = [];
  let looping = false;

  const scheduler = new ProposalScheduler({
    self,
    chain,
    mempool: deps.mempool,
    clock,
    timers: deps.timers,
    settings,
    running: () => engine !== undefined,
    ready: (height, round, block) => dispatch({ type: 'proposal-ready', height, round, block }),
  });
  const executor = new ActionExecutor({
    self,
    chain,
    stateStore,
    network: deps.network,
    timers: deps.timers,
    clock,
    metrics,
    log,
    scheduler,
    commit: deps.commit,
    timeout: (height, round) => dispatch({ type: 'timeout', height, round }),
  });

  const checkProposal = (block: Block): string | null => {
    for (const r of block.records) if (chain.isCommitted(r.id)) return `record ${r.id} already committed`;
    if (block.header.timestamp > clock.now() + MAX_FUTURE_MS) return 'timestamp in the future';
    const parent = chain.get(block.header.height - 1);
    if (parent && block.header.timestamp < parent.header.timestamp) return 'timestamp before the parent';
    return null;
  };

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
        if (executor.execute(actions)) afterHeightChange();
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

  /** After the chain grew: drop stale timers, re-check the role, start the next height. */
  function afterHeightChange(): void {
    scheduler.heightChanged();
    executor.clearTimers(chain.height);
    if (!running) return;
    const validator = chain.activeSetAt(chain.height + 1).includes(self);
    if (validator && !engine) {
      engine = newEngine();
      log.info({ height: chain.height + 1 }, 'role: validator');
    } else if (!validator && engine) {
      engine = undefined;
      executor.clearTimers();
      log.info({ height: chain.height + 1 }, 'role: passive follower');
    }
    metrics.isValidator.set(validator ? 1 : 0);
    if (engine) dispatch({ type: 'start', ctx: heightContextAfter(chain.tip(), chain.timeline) });
  }

  return {
    admit(body) {
      const admission = admit(body, chain, verify);
      if (!admission.ok) executor.refused(admission.reason, admission.detail);
      return admission;
    },
    onMessage(msg) {
      if (!engine) {
        executor.refused('not_validator', 'this node is a passive follower', msg);
        return;
      }
      dispatch({ type: 'message', msg });
    },
    onExternalCommit() {
      afterHeightChange();
    },
    onMempool() {
      scheduler.workArrived();
    },
    start() {
      running = true;
      afterHeightChange();
    },
    stop() {
      running = false;
      engine = undefined;
      executor.clearTimers();
      scheduler.cancel();
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
