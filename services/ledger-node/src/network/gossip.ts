// Fan-out to the registry's peers: records are batched per event-loop turn so a burst of
// submissions becomes a few POST /mempool calls; everything else is sent right away. Sends are
// fire-and-forget with a bounded number in flight per peer: a slow peer loses gossip (it will
// catch up by pull sync) instead of stalling this node. The node keeps two of these on separate
// connection pools: one for consensus messages (high cap) and one for bulk traffic, so records and
// blocks never queue in front of, or crowd out, a vote.

import type { IntegrityRecord, PeerSpec } from '@scriptorium/ledger-protocol';
import type { Logger } from 'pino';
import type { Transport } from './transport.ts';

const RECORD_BATCH = 2000;

export class Gossip {
  private readonly transport: Transport;
  private readonly peers: () => PeerSpec[];
  private readonly logger: Logger;
  private readonly inFlight = new Map<string, number>();
  private readonly maxInFlight: number;
  private pendingRecords: IntegrityRecord[] = [];
  private flushTimer: NodeJS.Immediate | undefined;
  /** Sends dropped because a peer had too many requests in flight. */
  dropped = 0;

  constructor(transport: Transport, peers: () => PeerSpec[], logger: Logger, maxInFlightPerPeer = 64) {
    this.transport = transport;
    this.maxInFlight = maxInFlightPerPeer;
    this.peers = peers;
    this.logger = logger;
  }

  /** POSTs a pre-serialized JSON body to each of `targets` (default: every peer). */
  sendRaw(
    path: string,
    json: string,
    targets: PeerSpec[] = this.peers(),
    timeoutMs = 5000,
    headers?: Record<string, string>,
  ): void {
    for (const peer of targets) {
      const n = this.inFlight.get(peer.publicKey) ?? 0;
      if (n >= this.maxInFlight) {
        this.dropped++;
        continue;
      }
      this.inFlight.set(peer.publicKey, n + 1);
      this.transport
        .postRaw(peer, path, json, timeoutMs, headers)
        .then((res) => {
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

  flush(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    while (this.pendingRecords.length > 0) {
      const batch = this.pendingRecords.splice(0, RECORD_BATCH);
      this.sendRaw('/mempool', JSON.stringify({ records: batch }), this.peers(), 5000, { 'x-gossip': '1' });
    }
  }

  stop(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
  }
}
