// The consensus driver: one input loop around the pure engine (src/consensus). It takes peer
// messages (from the node's bounded inbound queue), its own follow-up events, timeouts and
// proposal answers one at a time, and executes the engine's actions in order:
//   persist   → framed WAL record, fsync, before any later action of the same list (no equivocation
//               after a restart: the engine is rebuilt from that state);
//   broadcast → POST /consensus to the registry's peers that are validators at that height;
//   schedule-timeout → a timer that feeds `timeout` back into the loop;
//   request-proposal → a block from the mempool and pending validator changes (`proposal-ready`);
//   finalize  → store the block (fsync), prune the mempool, push it to peers, start the next height.
// Role: the engine runs only while this node's key is in the active set of the next height; when a
// finalized block removes it the node becomes a passive follower (sync only), and back when added.
import {
  type Block,
  buildBlock,
  type ConsensusMessage,
  MAX_CHANGES_PER_BLOCK,
  messageSigningBytes,
  safeParseMessage,
  sha256Hex,
  verifySignature,
} from '@scriptorium/ledger-protocol';
import { createSigner } from '@scriptorium/ledger-protocol/keys';
import {
  createEngine,
  type Engine,
  type EngineAction,
  type EngineEvent,
  heightContextAfter,
  type PersistedState,
  parsePersistedState,
} from '../consensus/index.ts';
import { NodeError } from '../errors.ts';
import { StateStore } from '../storage/index.ts';
import type { ConsensusDriver, LedgerNode } from './node.ts';

const VERIFIED_CACHE_MAX = 200_000;
/** Clock skew tolerated on a proposal's timestamp. */
const MAX_FUTURE_MS = 30_000;

export function createDriver(node: LedgerNode): ConsensusDriver {
  const { config, logger, metrics, chain, mempool } = node;
  const signer = createSigner(node.keys.privateKey);
  const self = node.keys.publicKey;
  const stateStore = StateStore.open<PersistedState>(config.dataDir);
  const log = logger.child({ name: 'node.consensus' });

  // Signatures already checked at the gate; the engine re-checks every signature it sees, and this
  // cache (keyed by key, signature and a hash of the signed bytes) makes that second check cheap.
  const verified = new Set<string>();
  const cacheKey = (pk: string, bytes: Uint8Array, sig: string) => `${pk}${sig}${sha256Hex(bytes)}`;
  const verify = (pk: string, bytes: Uint8Array, sig: string): boolean => {
    const key = cacheKey(pk, bytes, sig);
    if (verified.has(key)) return true;
    const ok = verifySignature(pk, bytes, sig);
    if (ok) remember(key);
    return ok;
  };
  const remember = (key: string) => {
    if (verified.size >= VERIFIED_CACHE_MAX) verified.clear();
    verified.add(key);
  };

  let engine: Engine | undefined;
  let running = false;
  let currentRound = 0;
  let currentHeight = -1;
  const timers = new Map<string, NodeJS.Timeout>();
  let pendingProposal: { height: number; round: number; timer: NodeJS.Timeout | undefined } | undefined;
  const events: EngineEvent[] = [];
  let looping = false;

  const checkProposal = (block: Block): string | null => {
    for (const r of block.records) if (chain.isCommitted(r.id)) return `record ${r.id} already committed`;
    if (block.header.timestamp > Date.now() + MAX_FUTURE_MS) return 'timestamp in the future';
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
      { chainId: chain.chainId, self, sign: signer.sign, verify, baseTimeoutMs: config.roundTimeoutMs, checkProposal },
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
            stateStore.save(action.state); // fsync before anything after it
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
      }
    }
    if (finalized) afterHeightChange();
  }

  function broadcast(msg: ConsensusMessage): void {
    const height = Math.min(msg.height, chain.height + 1);
    const set = new Set(chain.activeSetAt(height));
    const targets = node.peers.others().filter((p) => set.has(p.publicKey));
    metrics.messagesOut.inc({ type: msg.type });
    // A late vote is still useful (a late COMMIT quorum decides), so the timeout is generous.
    node.consensusGossip.sendRaw('/consensus', JSON.stringify(msg), targets, 30_000);
  }

  function scheduleTimeout(height: number, round: number, afterMs: number): void {
    const key = `${height}:${round}`;
    const old = timers.get(key);
    if (old) clearTimeout(old);
    timers.set(
      key,
      setTimeout(() => {
        timers.delete(key);
        dispatch({ type: 'timeout', height, round });
      }, afterMs),
    );
  }

  function clearTimersUpTo(height: number): void {
    for (const [key, t] of timers) {
      if (Number(key.split(':')[0]) <= height) {
        clearTimeout(t);
        timers.delete(key);
      }
    }
  }

  function requestProposal(height: number, round: number): void {
    if (height !== chain.height + 1) return;
    if (pendingProposal?.timer) clearTimeout(pendingProposal.timer);
    pendingProposal = { height, round, timer: undefined };
    const hasWork = mempool.size > 0 || mempool.pendingChanges > 0;
    // With work waiting, propose at once (or after the configured batching delay). When idle, wait
    // for records, then propose an empty heartbeat block after a quarter of the base timeout, so that
    // the three phases keep most of the round's time and a quiet chain never changes rounds.
    const wait = hasWork ? config.blockDelayMs : Math.max(1, Math.floor(config.roundTimeoutMs / 4));
    if (wait === 0) proposeNow();
    else pendingProposal.timer = setTimeout(proposeNow, wait);
  }

  function proposeNow(): void {
    const p = pendingProposal;
    if (!p) return;
    if (p.timer) clearTimeout(p.timer);
    pendingProposal = undefined;
    if (!engine || p.height !== chain.height + 1) return;
    const parent = chain.tip();
    const block = buildBlock({
      chainId: chain.chainId,
      height: p.height,
      parentHash: chain.tipHash,
      proposer: self,
      timestamp: Math.max(Date.now(), parent.header.timestamp),
      records: mempool.take(config.maxBlockRecords, config.maxBlockBytes),
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
    node.commit(block, 'consensus');
    // Every validator finalizes this block from its own COMMIT quorum at about the same time, so a
    // push from each of them to each other is N × (N − 1) copies of a large body for nothing. The
    // proposer pushes to everyone (a validator that missed the quorum gets it at once); the others
    // push only to followers. A validator that misses both catches up by pull sync, which a
    // consensus message of a later height starts at once.
    if (block.header.proposer === self) node.pushBlock(block);
    else {
      const validators = new Set(chain.activeSetAt(block.header.height));
      const followers = node.peers.others().filter((p) => !validators.has(p.publicKey));
      if (followers.length > 0) node.pushBlock(block, followers);
    }
    return true;
  }

  /** After the chain grew: drop stale timers, re-check the role, start the next height. */
  function afterHeightChange(): void {
    clearTimersUpTo(chain.height);
    if (pendingProposal && pendingProposal.height <= chain.height) {
      if (pendingProposal.timer) clearTimeout(pendingProposal.timer);
      pendingProposal = undefined;
    }
    if (!running) return;
    const validator = chain.activeSetAt(chain.height + 1).includes(self);
    if (validator && !engine) {
      engine = newEngine();
      log.info({ height: chain.height + 1 }, 'role: validator');
    } else if (!validator && engine) {
      engine = undefined;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      log.info({ height: chain.height + 1 }, 'role: passive follower');
    }
    metrics.isValidator.set(validator ? 1 : 0);
    if (engine) dispatch({ type: 'start', ctx: heightContextAfter(chain.tip(), chain.timeline) });
  }

  return {
    gate(body) {
      const parsed = safeParseMessage(body);
      if (!parsed.success) return { ok: false, reason: 'malformed' };
      const msg = parsed.data;
      if (msg.chain_id !== chain.chainId) return { ok: false, reason: 'wrong_chain' };
      const setHeight = Math.min(msg.height, chain.height + 1);
      if (!chain.activeSetAt(setHeight).includes(msg.author)) return { ok: false, reason: 'not_validator' };
      const bytes = messageSigningBytes(msg);
      if (!verifySignature(msg.author, bytes, msg.signature)) return { ok: false, reason: 'bad_signature' };
      remember(cacheKey(msg.author, bytes, msg.signature));
      return { ok: true, message: msg, type: msg.type, height: msg.height };
    },
    onMessage(message) {
      const msg = message as ConsensusMessage;
      if (!engine || msg.height <= chain.height) return; // old height or follower: nothing to do
      dispatch({ type: 'message', msg });
    },
    onExternalCommit() {
      afterHeightChange();
    },
    onMempool() {
      if (pendingProposal && engine) proposeNow();
    },
    start() {
      running = true;
      afterHeightChange();
    },
    stop() {
      running = false;
      engine = undefined;
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
      if (pendingProposal?.timer) clearTimeout(pendingProposal.timer);
      pendingProposal = undefined;
      stateStore.close();
    },
    get round() {
      return currentRound;
    },
  };
}
