// One ledger node, composed: chain state on its block store, mempool, peer registry, transports and gossip,
// the consensus driver on its production ports, the bounded inbound queue in front of it, the block applier,
// pull sync and the peer announce loop. One signature cache serves the gate, the engine and the chain's seals.
//
//   POST /consensus → admit (consensus/gate.ts) → InboundQueue → driver → engine → driver → storage/network
//   driver finalize, POST /block, pull sync (sync.ts) → applier.ts (verify, store, mempool, role, listeners)
//   POST /mempool, /membership → intake.ts → mempool → the proposer's next block
import { type Block, type ConsensusMessage, type PeerSpec, verifySignature } from '@scriptorium/ledger-protocol';
import { createSigner, type KeyPair } from '@scriptorium/ledger-protocol/keys';
import type { Logger } from 'pino';
import type { NodeConfig } from '../config.ts';
import { cachedVerify } from '../consensus/index.ts';
import { badRequest, ConsensusRefused, NodeError } from '../errors.ts';
import { Mempool } from '../mempool/index.ts';
import type { NodeMetrics } from '../metrics.ts';
import { Gossip, RECORD_BATCH } from '../network/gossip.ts';
import { PeerRegistry } from '../network/peers.ts';
import { createTransport, type Transport } from '../network/transport.ts';
import { BlockStore, StateStore } from '../storage/index.ts';
import { BlockApplier, type BlockOrigin } from './applier.ts';
import { ChainState } from './chain-state.ts';
import { type ConsensusDriver, createDriver } from './driver.ts';
import { InboundQueue } from './inbound-queue.ts';
import { MempoolIntake } from './intake.ts';
import { announcePeers } from './peer-announce.ts';
import { ChainSync } from './sync.ts';
import { httpConsensusNetwork, httpSyncNetwork, systemClock, systemTimers } from './system-ports.ts';

/** How often the mempool is asked for this node's records due to be gossiped again, and how many go out at most. */
const REGOSSIP_TICK_MS = 2000;
const REGOSSIP_MAX_PER_TICK = 2000;

export type { BlockOrigin } from './applier.ts';

export interface NodeDeps {
  config: NodeConfig;
  keys: KeyPair;
  genesis: Block;
  logger: Logger;
  metrics: NodeMetrics;
}

export class LedgerNode {
  readonly config: NodeConfig;
  readonly keys: KeyPair;
  readonly logger: Logger;
  readonly metrics: NodeMetrics;
  readonly nodeId: string;
  readonly chain: ChainState;
  readonly mempool: Mempool;
  readonly peers: PeerRegistry;
  /** Bulk traffic: record gossip, blocks, sync, announce. */
  readonly transport: Transport;
  readonly gossip: Gossip;
  /** Votes get their own connection pool and a high in-flight cap: bulk gossip never delays or drops them. */
  readonly consensusTransport: Transport;
  readonly consensusGossip: Gossip;
  readonly driver: ConsensusDriver;
  readonly intake: MempoolIntake;
  readonly applier: BlockApplier;
  readonly sync: ChainSync<PeerSpec>;
  private readonly inbound: InboundQueue<ConsensusMessage>;
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;

  constructor(deps: NodeDeps) {
    const { config, logger, metrics } = deps;
    this.config = config;
    this.keys = deps.keys;
    this.logger = logger;
    this.metrics = metrics;
    this.nodeId = config.nodeId ?? `node-${deps.keys.publicKey.slice(0, 8)}`;

    const { store, truncatedBytes } = BlockStore.open<Block>(config.dataDir);
    if (truncatedBytes > 0) logger.warn({ truncatedBytes }, 'blocks.wal: torn tail truncated');
    // The one signature cache: the gate's door, the engine, and the chain's check of a finalized block's seals
    // (checked as COMMITs already, so usually hits).
    const verify = cachedVerify(verifySignature);
    try {
      this.chain = ChainState.open(store, deps.genesis, verify);
    } catch (err) {
      store.close();
      throw err instanceof NodeError
        ? new NodeError(err.code, `data directory ${config.dataDir}: ${err.message}`)
        : err;
    }
    const chain = this.chain;
    this.mempool = new Mempool({
      maxRecords: config.mempoolMax,
      regossipAfterMs: config.mempoolRegossipAfterMs,
      isCommitted: (id) => chain.isCommitted(id),
    });
    const self: PeerSpec = {
      nodeId: this.nodeId,
      host: config.advertise.host,
      port: config.advertise.port,
      publicKey: deps.keys.publicKey,
    };
    this.peers = new PeerRegistry(self, config.seedPeers);
    this.transport = createTransport({ tls: config.tls, clusterToken: config.clusterToken });
    this.gossip = new Gossip(this.transport, () => this.peers.others(), logger, 64, {
      dropped: () => metrics.gossipDropped.inc({ pool: 'bulk' }),
      // A record a validator holds is not gossiped again (mempool.ts): it proposes it in its turn. A follower that
      // took it does not count: it never proposes.
      recordsDelivered: (records, peer) => {
        if (this.currentValidators().includes(peer.publicKey)) this.mempool.delivered(records);
      },
    });
    this.consensusTransport = createTransport({ tls: config.tls, clusterToken: config.clusterToken });
    this.consensusGossip = new Gossip(this.consensusTransport, () => this.peers.others(), logger, 4096, {
      dropped: () => metrics.gossipDropped.inc({ pool: 'consensus' }),
    });

    this.applier = new BlockApplier({
      self: deps.keys.publicKey,
      chain,
      mempool: this.mempool,
      metrics,
      log: logger,
      onExternalCommit: () => this.driver.onExternalCommit(),
      onBehind: () => this.sync.request(),
    });
    const log = logger.child({ name: 'node.consensus' });
    this.driver = createDriver({
      signer: createSigner(deps.keys.privateKey),
      chain,
      mempool: this.mempool,
      verify,
      commit: (block) => this.applier.apply(block, 'consensus'),
      settings: {
        roundTimeoutMs: config.roundTimeoutMs,
        blockDelayMs: config.blockDelayMs,
        emptyBlockIntervalMs: config.emptyBlockIntervalMs,
        maxBlockRecords: config.maxBlockRecords,
        maxBlockBytes: config.maxBlockBytes,
      },
      metrics,
      log,
      clock: systemClock,
      timers: systemTimers,
      stateStore: StateStore.open(config.dataDir),
      network: httpConsensusNetwork(this.peers, this.consensusGossip, (block, targets) =>
        this.pushBlock(block, targets),
      ),
    });
    this.intake = new MempoolIntake({
      mempool: this.mempool,
      gossip: this.gossip,
      metrics,
      onNewWork: () => this.driver.onMempool(),
      nodeId: this.nodeId,
      activeSet: () => this.currentValidators(),
    });
    this.inbound = new InboundQueue<ConsensusMessage>(
      config.inboundQueue,
      (msg) => this.driver.onMessage(msg),
      (depth) => metrics.inboundQueueDepth.set(depth),
      (err) => logger.error({ err }, 'driver failed on a message'),
    );
    this.sync = new ChainSync({
      chain,
      network: httpSyncNetwork(this.transport, () => this.peers.others(), logger),
      receive: (body, origin) => this.applier.receive(body, origin),
      log: logger,
      after: systemTimers.after,
    });
    metrics.height.set(chain.height);
  }

  // ---- lifecycle -------------------------------------------------------------------------

  start(): void {
    this.metrics.isValidator.set(this.isValidator() ? 1 : 0);
    this.driver.start();
    this.announce();
    this.sync.request();
    this.timers.push(setInterval(() => this.announce(), this.config.announceIntervalMs));
    this.timers.push(setInterval(() => this.sync.request(), this.config.syncIntervalMs));
    this.timers.push(setInterval(() => this.regossip(), REGOSSIP_TICK_MS));
  }

  /**
   * A stopping node's hand-off: the records accepted here that no block holds yet go to every peer once more, and the
   * sends are awaited (each bounded by its timeout, within the process's shutdown). A gossip lost earlier (peers down,
   * busy past the send's timeout, or over the in-flight bound) would otherwise leave them only in this node's memory,
   * which ends now. Sent directly, not through the gossip's in-flight bound: the peers that were slow a moment ago
   * are the likeliest to have missed them. Logged: how many peers took them (a warning when none did).
   */
  private async handOff(): Promise<void> {
    const pending = this.mempool.take(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
    if (pending.length === 0) return;
    const peers = this.peers.others();
    const bodies: string[] = [];
    for (let i = 0; i < pending.length; i += RECORD_BATCH)
      bodies.push(JSON.stringify({ records: pending.slice(i, i + RECORD_BATCH) }));
    const outcomes = await Promise.all(
      peers.map(async (peer) => {
        try {
          for (const body of bodies) {
            const res = await this.transport.postRaw(peer, '/mempool', body, 5000, { 'x-gossip': '1' });
            if (res.status >= 300) return `${peer.nodeId}: ${res.status}`;
          }
          return undefined;
        } catch (err) {
          return `${peer.nodeId}: ${(err as Error).message}`;
        }
      }),
    );
    const failed = outcomes.filter((o): o is string => o !== undefined);
    const took = peers.length - failed.length;
    const fields = { records: pending.length, peers: peers.length, took, failed: failed.slice(0, 8) };
    if (took === 0) this.logger.warn(fields, 'stopping: no peer took the pending records (only this node held them)');
    else this.logger.info(fields, 'stopping: pending records handed to the peers');
  }

  /** Gossips again this node's own records that are still pending after their wait (mempool.ts says why). */
  private regossip(): void {
    const due = this.mempool.dueForRegossip(REGOSSIP_MAX_PER_TICK);
    if (due.length === 0) return;
    this.metrics.recordsRegossiped.inc(due.length);
    this.gossip.records(due);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.inbound.stop();
    this.sync.stop();
    this.driver.stop();
    this.gossip.stop();
    await this.handOff();
    await this.transport.close().catch(() => {});
    await this.consensusTransport.close().catch(() => {});
    this.chain.close();
  }

  // ---- consensus inbound -----------------------------------------------------------------

  get queueDepth(): number {
    return this.inbound.depth;
  }

  /** POST /consensus: the gate's door (400 with the gate's reason), then the bounded queue (503 when full). */
  submitConsensus(body: unknown): void {
    const admission = this.driver.admit(body);
    if (!admission.ok) throw new ConsensusRefused(admission.reason, admission.detail);
    const msg = admission.msg;
    if (msg.height > this.chain.height + 1) this.sync.request();
    if (!this.inbound.push(msg)) {
      this.metrics.rejectedMessages.inc({ reason: 'queue_full' });
      throw new NodeError('queue_full', 'inbound queue full');
    }
    this.metrics.messagesIn.inc({ type: msg.type });
  }

  // ---- finalized blocks ------------------------------------------------------------------

  /** Called with every block this node appends, after it is durable, in height order. */
  onFinalized(listener: (block: Block, origin: BlockOrigin) => void): void {
    this.applier.onFinalized(listener);
  }

  /** Pushes a finalized block (POST /block) to `targets` (default: every peer). */
  pushBlock(block: Block, targets: PeerSpec[] = this.peers.others()): void {
    // The height header lets a peer that already has the block answer before parsing the body.
    const headers = { 'x-block-height': String(block.header.height) };
    this.gossip.sendRaw('/block', JSON.stringify(block), targets, { headers });
  }

  /** True when a pushed block of this height is already stored (checked before the body is parsed). */
  hasHeight(height: number): boolean {
    return height <= this.chain.height;
  }

  /** POST /block: a finalized block pushed by a peer, verified before it is stored (applier.ts). */
  async receiveBlock(body: unknown): Promise<{ height: number; status: 'applied' | 'known' | 'ahead' }> {
    const receipt = this.applier.receive(body, 'push');
    if (receipt.status !== 'refused') return receipt;
    if (receipt.height < 0) throw badRequest('malformed payload: header.height');
    throw new NodeError('invalid_block', `block refused: ${receipt.reason}`);
  }

  // ---- peers -----------------------------------------------------------------------------

  /** POST /peers and pulled peer lists: the first spec is the announcer's own (PeerRegistry.mergeAnnouncement). */
  mergePeers(specs: PeerSpec[], announcer?: string): { added: number; updated: number } {
    const result = this.peers.mergeAnnouncement(specs, announcer);
    this.metrics.peers.set(this.peers.size);
    return result;
  }

  private announce(): void {
    if (this.stopped) return;
    // A retired validator's address stops resolving once its pod and Service are gone; asked every round (announce,
    // gossip, sync), each lookup held one of libuv's 4 threads, which the block store's file I/O shares, for seconds.
    const active = new Set(this.chain.activeSetAt(this.chain.height + 1));
    for (const peer of this.peers.forgetUnreachable(active, Date.now(), this.config.forgetUnreachableAfterMs)) {
      this.logger.info(
        { peer: peer.nodeId, after_ms: this.config.forgetUnreachableAfterMs },
        'forgot a peer outside the validator set that no announce reaches',
      );
    }
    void announcePeers(this.peers, this.transport, (specs, announcer) => this.mergePeers(specs, announcer));
    this.metrics.peers.set(this.peers.size);
  }

  // ---- role ------------------------------------------------------------------------------

  /** The active set of the next height. */
  currentValidators(): readonly string[] {
    return this.chain.activeSetAt(this.chain.height + 1);
  }

  isValidator(): boolean {
    return this.currentValidators().includes(this.keys.publicKey);
  }
}
