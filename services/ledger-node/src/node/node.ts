// One ledger node: chain state, mempool, peer registry, gossip, pull sync and the bounded
// inbound queue in front of the consensus driver. Implements what the HTTP layer needs.
import { randomUUID } from 'node:crypto';
import {
  type Block,
  type ChainStatus,
  type IntegrityRecord,
  MAX_PEERS,
  type PeerSpec,
  parsePeerSpec,
  quorumSize,
  type ValidatorChange,
} from '@scriptorium/ledger-protocol';
import type { KeyPair } from '@scriptorium/ledger-protocol/keys';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { LedgerService } from '../api/service.ts';
import type { NodeConfig } from '../config.ts';
import { badRequest, NodeError } from '../errors.ts';
import { Mempool } from '../mempool/index.ts';
import type { NodeMetrics } from '../metrics.ts';
import { Gossip } from '../network/gossip.ts';
import { PeerRegistry } from '../network/peers.ts';
import { createTransport, type Transport } from '../network/transport.ts';
import { ChainState } from './chain-state.ts';

/** What the node needs from the consensus driver (src/node/driver.ts). */
export interface ConsensusDriver {
  /** Shape + signature check at the gate; `message` is what `onMessage` later receives. */
  gate(body: unknown): { ok: true; message: unknown; type: string; height: number } | { ok: false; reason: string };
  /** A gate-checked message, taken from the inbound queue one at a time. */
  onMessage(message: unknown): void;
  /** The chain grew by a block this driver did not finalize (push or pull). */
  onExternalCommit(block: Block): void;
  /** New records or validator changes arrived in the mempool (a waiting proposer may propose now). */
  onMempool(): void;
  /** Re-evaluates the role (validator/follower) and starts or stops the engine. */
  start(): void;
  stop(): void;
  /** Current round at the open height (metrics, /ui). */
  readonly round: number;
}

export interface NodeDeps {
  config: NodeConfig;
  keys: KeyPair;
  genesis: Block;
  logger: Logger;
  metrics: NodeMetrics;
}

const SYNC_BATCH = 256;
const PULL_AHEAD = 8;

/**
 * A gossiped record: an object with an `id`. The body came from JSON.parse, so every other field is
 * JSON already; this is the chain's IntegrityRecord rule without re-walking each value (hot path).
 */
const mempoolRecord = z.looseObject({ id: z.string().min(1).max(256) });

/** The same rule as `mempoolRecord`, without building a parse result (zod stays for the error message). */
function isMempoolRecord(r: unknown): r is IntegrityRecord {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return false;
  const id = (r as { id?: unknown }).id;
  return typeof id === 'string' && id.length >= 1 && id.length <= 256;
}

export class LedgerNode implements LedgerService {
  readonly config: NodeConfig;
  readonly keys: KeyPair;
  readonly logger: Logger;
  readonly metrics: NodeMetrics;
  readonly chain: ChainState;
  readonly mempool: Mempool;
  readonly peers: PeerRegistry;
  readonly transport: Transport;
  readonly gossip: Gossip;
  readonly consensusTransport: Transport;
  readonly consensusGossip: Gossip;
  readonly nodeId: string;
  driver: ConsensusDriver | undefined;

  private readonly inbound: unknown[] = [];
  private inboundHead = 0;
  private draining = false;
  private readonly peerHeights = new Map<string, number>();
  private peerPollDone = false;
  private syncing = false;
  private syncAgain = false;
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private submitCounter = 0;

  constructor(deps: NodeDeps) {
    this.config = deps.config;
    this.keys = deps.keys;
    this.logger = deps.logger;
    this.metrics = deps.metrics;
    this.nodeId = deps.config.nodeId ?? `node-${deps.keys.publicKey.slice(0, 8)}`;
    const { chain, truncatedBytes } = ChainState.open(deps.config.dataDir, deps.genesis);
    if (truncatedBytes > 0) this.logger.warn({ truncatedBytes }, 'blocks.wal: torn tail truncated');
    this.chain = chain;
    this.mempool = new Mempool({ maxRecords: deps.config.mempoolMax, isCommitted: (id) => chain.isCommitted(id) });
    const self: PeerSpec = {
      nodeId: this.nodeId,
      host: deps.config.advertise.host,
      port: deps.config.advertise.port,
      publicKey: deps.keys.publicKey,
    };
    this.peers = new PeerRegistry(self, deps.config.seedPeers);
    this.transport = createTransport({ tls: deps.config.tls, clusterToken: deps.config.clusterToken });
    this.gossip = new Gossip(this.transport, () => this.peers.others(), this.logger);
    // Votes get their own connection pool and a high in-flight cap: bulk gossip never delays or drops them.
    this.consensusTransport = createTransport({ tls: deps.config.tls, clusterToken: deps.config.clusterToken });
    this.consensusGossip = new Gossip(this.consensusTransport, () => this.peers.others(), this.logger, 4096);
    this.metrics.height.set(chain.height);
  }

  // ---- lifecycle -------------------------------------------------------------------------

  start(): void {
    this.refreshRoleMetrics();
    this.driver?.start();
    this.announce();
    void this.sync();
    this.timers.push(setInterval(() => this.announce(), this.config.announceIntervalMs));
    this.timers.push(setInterval(() => void this.sync(), this.config.syncIntervalMs));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.driver?.stop();
    this.gossip.flush();
    this.gossip.stop();
    await this.transport.close().catch(() => {});
    await this.consensusTransport.close().catch(() => {});
    this.chain.close();
  }

  // ---- consensus inbound queue -----------------------------------------------------------

  get queueDepth(): number {
    return this.inbound.length - this.inboundHead;
  }

  submitConsensus(body: unknown): void {
    const driver = this.driver;
    if (!driver) throw badRequest('consensus is not running on this node');
    const gated = driver.gate(body);
    if (!gated.ok) {
      this.metrics.rejectedMessages.inc({ reason: gated.reason });
      throw new NodeError('bad_signature', `consensus message refused: ${gated.reason}`);
    }
    if (gated.height > this.chain.height + 1) this.requestSync();
    if (this.queueDepth >= this.config.inboundQueue) {
      this.metrics.rejectedMessages.inc({ reason: 'queue_full' });
      throw new NodeError('queue_full', 'inbound queue full');
    }
    this.metrics.messagesIn.inc({ type: gated.type });
    this.inbound.push(gated.message);
    this.metrics.inboundQueueDepth.set(this.queueDepth);
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => this.drain());
    }
  }

  /** Feeds queued messages to the driver one at a time, yielding to I/O every batch. */
  private drain(): void {
    const started = performance.now();
    while (this.inboundHead < this.inbound.length && !this.stopped) {
      const msg = this.inbound[this.inboundHead];
      this.inbound[this.inboundHead++] = undefined;
      try {
        this.driver?.onMessage(msg);
      } catch (err) {
        this.logger.error({ err }, 'driver failed on a message');
      }
      if (performance.now() - started > 20) break;
    }
    if (this.inboundHead > 1024 && this.inboundHead * 2 > this.inbound.length) {
      this.inbound.splice(0, this.inboundHead);
      this.inboundHead = 0;
    }
    this.metrics.inboundQueueDepth.set(this.queueDepth);
    if (this.queueDepth > 0 && !this.stopped) setImmediate(() => this.drain());
    else this.draining = false;
  }

  // ---- finalized blocks ------------------------------------------------------------------

  /** Appends a verified block (fsync), prunes the mempool, records metrics. */
  commit(block: Block, origin: 'consensus' | 'push' | 'pull'): void {
    this.chain.append(block);
    const ages = this.mempool.removeCommitted(block.records, block.validator_changes);
    for (const age of ages) this.metrics.finalityLatency.observe(age / 1000);
    this.metrics.recordsFinalized.inc(block.records.length);
    this.metrics.height.set(block.header.height);
    this.metrics.mempoolSize.set(this.mempool.size);
    if (block.validator_changes.length > 0) this.refreshRoleMetrics();
    this.logger.debug({ height: block.header.height, records: block.records.length, origin }, 'block finalized');
    if (origin !== 'consensus') this.driver?.onExternalCommit(block);
  }

  /** Pushes a block this node finalized to every peer (POST /block). */
  pushBlock(block: Block, targets: PeerSpec[] = this.peers.others()): void {
    // The height header lets a peer that already has the block answer before parsing the body.
    const headers = { 'x-block-height': String(block.header.height) };
    this.gossip.sendRaw('/block', JSON.stringify(block), targets, 5000, headers);
  }

  /** True when a pushed block of this height is already stored (checked before the body is parsed). */
  hasHeight(height: number): boolean {
    return height <= this.chain.height;
  }

  async receiveBlock(body: unknown): Promise<{ height: number; status: 'applied' | 'known' | 'ahead' }> {
    const height = (body as { header?: { height?: unknown } } | null)?.header?.height;
    if (typeof height !== 'number' || !Number.isInteger(height) || height < 0)
      throw badRequest('malformed payload: header.height');
    if (height <= this.chain.height) return { height, status: 'known' };
    if (height > this.chain.height + 1) {
      this.requestSync();
      return { height, status: 'ahead' };
    }
    const verdict = this.chain.verifyNext(body);
    if (!verdict.ok) throw new NodeError('invalid_block', `block refused: ${verdict.reason}`);
    this.commit(verdict.block, 'push');
    return { height, status: 'applied' };
  }

  // ---- pull sync -------------------------------------------------------------------------

  requestSync(): void {
    if (this.syncing) this.syncAgain = true;
    else void this.sync();
  }

  /** Polls every peer's /chain, then pulls missing blocks from the highest peer. */
  async sync(): Promise<void> {
    if (this.syncing || this.stopped) return;
    this.syncing = true;
    try {
      do {
        this.syncAgain = false;
        const peers = this.peers.others();
        const results = await Promise.all(
          peers.map(async (peer) => {
            try {
              const res = await this.transport.get(peer, '/chain', 2000);
              const h = (res.body as { height?: unknown }).height;
              if (res.status === 200 && typeof h === 'number') {
                this.peerHeights.set(peer.publicKey, h);
                return { peer, height: h };
              }
            } catch {
              this.peerHeights.delete(peer.publicKey);
            }
            return undefined;
          }),
        );
        this.peerPollDone = true;
        const best = results.filter((r) => r !== undefined).sort((a, b) => b.height - a.height)[0];
        if (best && best.height > this.chain.height) await this.pullFrom(best.peer, best.height);
      } while (this.syncAgain && !this.stopped);
    } finally {
      this.syncing = false;
    }
  }

  /**
   * Pulls blocks (chain height + 1 … target) from one peer, up to SYNC_BATCH per pass. Up to
   * PULL_AHEAD requests are in flight while the current block is verified, so the network wait
   * overlaps the (CPU-bound) verification. Blocks are still verified and stored strictly in order.
   */
  private async pullFrom(peer: PeerSpec, target: number): Promise<void> {
    const last = Math.min(target, this.chain.height + SYNC_BATCH);
    const inFlight = new Map<number, Promise<Awaited<ReturnType<Transport['get']>> | undefined>>();
    const fetch = (h: number) =>
      this.transport.get(peer, `/blocks/${h}`, 10_000).catch((err: Error) => {
        this.logger.debug({ peer: peer.nodeId, err: err.message }, 'pull failed');
        return undefined;
      });
    let ahead = this.chain.height + 1;
    while (this.chain.height < last && !this.stopped) {
      while (ahead <= last && ahead <= this.chain.height + PULL_AHEAD) {
        inFlight.set(ahead, fetch(ahead));
        ahead++;
      }
      const next = this.chain.height + 1;
      const pending = inFlight.get(next) ?? fetch(next);
      inFlight.delete(next);
      const res = await pending;
      if (res?.status !== 200) break;
      if (this.chain.height >= next) continue; // finalized meanwhile by consensus or push
      const verdict = this.chain.verifyNext(res.body);
      if (!verdict.ok) {
        this.logger.warn({ peer: peer.nodeId, height: next, reason: verdict.reason }, 'pulled block refused');
        break;
      }
      this.commit(verdict.block, 'pull');
    }
    await Promise.all(inFlight.values());
    if (this.chain.height < target && !this.stopped) this.syncAgain = true;
  }

  readiness(): { ready: boolean; height: number; best_peer_height: number } {
    let best = -1;
    for (const h of this.peerHeights.values()) best = Math.max(best, h);
    const height = this.chain.height;
    const noPeers = this.peers.size === 0;
    const ready = !this.stopped && (noPeers || (this.peerPollDone && (best < 0 ? false : best - height <= 1)));
    return { ready, height, best_peer_height: best };
  }

  // ---- peers -----------------------------------------------------------------------------

  mergePeers(specs: PeerSpec[]): { added: number; updated: number } {
    const result = this.peers.merge(specs);
    this.metrics.peers.set(this.peers.size);
    return result;
  }

  listPeers(): string[] {
    return this.peers.specs();
  }

  /** Announces this node's registry to every peer and merges theirs. */
  private announce(): void {
    const body = JSON.stringify({ peers: this.peers.specs() });
    for (const peer of this.peers.others()) {
      this.transport
        .postRaw(peer, '/peers', body, 2000)
        .then(() => this.transport.get(peer, '/peers', 2000))
        .then((res) => {
          const list = (res.body as { peers?: unknown }).peers;
          if (res.status === 200 && Array.isArray(list)) {
            const parsed: PeerSpec[] = [];
            for (const text of list.slice(0, MAX_PEERS + 1)) {
              const spec = typeof text === 'string' ? parsePeerSpec(text) : 'not a string';
              if (typeof spec !== 'string') parsed.push(spec);
            }
            this.mergePeers(parsed);
          }
        })
        .catch(() => {});
    }
    this.metrics.peers.set(this.peers.size);
  }

  // ---- records and membership ------------------------------------------------------------

  addRecords(records: unknown[], relay = true): { accepted: number } {
    const parsed: IntegrityRecord[] = [];
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      // Hot path (every record of every submission and gossip): a plain check instead of a zod parse.
      if (isMempoolRecord(r)) {
        parsed.push(r);
        continue;
      }
      const issue = mempoolRecord.safeParse(r);
      throw badRequest(
        `malformed payload: records.${i}: ${issue.success ? 'invalid record' : issue.error.issues[0]?.message}`,
      );
    }
    const fresh = this.mempool.add(parsed);
    this.metrics.mempoolSize.set(this.mempool.size);
    if (relay) this.gossip.records(fresh);
    if (fresh.length > 0) this.driver?.onMempool();
    return { accepted: fresh.length };
  }

  addChanges(changes: ValidatorChange[]): { accepted: number } {
    const fresh = this.mempool.addChanges(changes);
    if (fresh.length > 0) {
      this.gossip.send('/membership', { changes: fresh });
      this.driver?.onMempool();
    }
    return { accepted: fresh.length };
  }

  adminSubmit(count: number): { accepted: number } {
    const now = Date.now();
    const records: IntegrityRecord[] = [];
    for (let i = 0; i < count; i++) {
      records.push({
        id: `synthetic-${this.nodeId}-${now}-${this.submitCounter++}-${randomUUID().slice(0, 8)}`,
        entity: `urn:ngsi-ld:Synthetic:${i % 100}`,
        attribute: 'value',
        value: i,
        verdict: 'OK',
        observed_at: new Date(now).toISOString(),
      });
    }
    return this.addRecords(records);
  }

  adminValidator(change: ValidatorChange): { accepted: number } {
    return this.addChanges([change]);
  }

  // ---- reads -----------------------------------------------------------------------------

  currentValidators(): readonly string[] {
    return this.chain.activeSetAt(this.chain.height + 1);
  }

  isValidator(): boolean {
    return this.currentValidators().includes(this.keys.publicKey);
  }

  private refreshRoleMetrics(): void {
    this.metrics.isValidator.set(this.isValidator() ? 1 : 0);
  }

  chainStatus(): ChainStatus {
    const validators = this.currentValidators();
    return {
      node_id: this.nodeId,
      height: this.chain.height,
      latest_hash: this.chain.tipHash,
      validators: validators.length,
      quorum: quorumSize(validators.length),
      is_validator: validators.includes(this.keys.publicKey),
      validator_keys: [...validators],
    };
  }

  getBlock(height: number): unknown | undefined {
    return this.chain.get(height);
  }

  getProof(height: number, index: number): unknown | undefined {
    return this.chain.proof(height, index);
  }
}
