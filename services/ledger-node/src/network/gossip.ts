// Fan-out to the registry's peers: records are batched per event-loop turn so a burst of
// submissions becomes a few POST /mempool calls; everything else is sent right away. Sends are
// fire-and-forget with a bounded number in flight per peer: a slow peer loses gossip (blocks it
// catches up by pull sync; records their origin gossips again while they are pending) instead of
// stalling this node. The node keeps two of these on separate connection pools: one for consensus
// messages (high cap) and one for bulk traffic, so records and blocks never queue in front of, or
// crowd out, a vote.

import type { IntegrityRecord, PeerSpec } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { Transport } from './transport.ts';

/** Records per POST /mempool (gossip, and a stopping node's hand-off). */
export const RECORD_BATCH = 2000;

export interface SendOptions {
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Called for each peer that answers 2xx. */
  onAccepted?: (peer: PeerSpec) => void;
}

export interface GossipHooks {
  /** A send was dropped because its peer had the most requests in flight (a metric). */
  dropped?: () => void;
  /** A batch of records reached `peer` (it answered 2xx): it is no longer only here. */
  recordsDelivered?: (records: readonly IntegrityRecord[], peer: PeerSpec) => void;
}

export class Gossip {
  private readonly transport: Transport;
  private readonly peers: () => PeerSpec[];
  private readonly logger: Logger;
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight: number;
  private pendingRecords: IntegrityRecord[] = [];
  private flushTimer: NodeJS.Immediate | undefined;
  private readonly hooks: GossipHooks;

  constructor(
    transport: Transport,
    peers: () => PeerSpec[],
    logger: Logger,
    maxInFlightPerPeer = 64,
    hooks: GossipHooks = {},
  ) {
    this.transport = transport;
    this.maxInFlight = maxInFlightPerPeer;
    this.peers = peers;
    this.logger = logger;
    this.hooks = hooks;
  }

  /** POSTs a pre-serialized JSON body to each of `targets` (default: every peer). */
  sendRaw(path: string, json: string, targets: PeerSpec[] = this.peers(), options: SendOptions = {}): void {
    const { timeoutMs = 5000, headers, onAccepted } = options;
    for (const peer of targets) {
      const n = this.inFlight.get(peer.publicKey) ?? 0;
      if (n >= this.maxInFlight) {
        this.hooks.dropped?.();
        continue;
      }
      this.inFlight.set(peer.publicKey, n + 1);
      this.transport
        .postRaw(peer, path, json, timeoutMs, headers)
        .then((res) => {
          if (res.status < 300) onAccepted?.(peer);
          if (res.status >= 400 && res.status !== 503)
            this.logger.debug({ peer: peer.nodeId, path, status: res.status }, 'peer refused');
        })
        .catch((err: Error) => this.logger.debug({ peer: peer.nodeId, path, err: err.message }, 'peer unreachable'))
        .finally(() => this.inFlight.set(peer.publicKey, (this.inFlight.get(peer.publicKey) ?? 1) - 1));
    }
  }

  send(path: string, body: unknown, targets?: PeerSpec[]): void {
    this.sendRaw(path, JSON.stringify(body), targets);
  }

  /** Queues records for the next POST /mempool batch. */
  records(records: IntegrityRecord[]): void {
    if (records.length === 0) return;
    for (const r of records) this.pendingRecords.push(r);
    if (this.pendingRecords.length >= RECORD_BATCH) this.flush();
    // Flush after the current I/O phase: records arriving in the same burst share one POST.
    else this.flushTimer ??= setImmediate(() => this.flush());
  }

  /** Sends the queued records now. */
  flush(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    while (this.pendingRecords.length > 0) {
      const batch = this.pendingRecords.splice(0, RECORD_BATCH);
      const delivered = this.hooks.recordsDelivered;
      this.sendRaw('/mempool', JSON.stringify({ records: batch }), this.peers(), {
        headers: { 'x-gossip': '1' },
        ...(delivered ? { onAccepted: (peer: PeerSpec) => delivered(batch, peer) } : {}),
      });
    }
  }

  stop(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
  }
}
