// Prometheus metrics of one node (prefix scriptorium_ledger_), on their own registry so that
// several nodes can live in one process (tests) without clashing.
import { MEMPOOL_METRIC, ROUND_CHANGES_METRIC, ROUND_METRIC } from '@scriptorium/ledger-protocol';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface NodeMetrics {
  registry: Registry;
  height: Gauge;
  round: Gauge;
  finalityLatency: Histogram;
  messagesIn: Counter<'type'>;
  messagesOut: Counter<'type'>;
  inboundQueueDepth: Gauge;
  peers: Gauge;
  roundChanges: Counter;
  rejectedMessages: Counter<'reason'>;
  recordsFinalized: Counter;
  recordsRegossiped: Counter;
  gossipDropped: Counter<'pool'>;
  mempoolSize: Gauge;
  isValidator: Gauge;
  memoryTrims: Counter;
  memoryTrimmedBytes: Counter;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): NodeMetrics {
  const registry = new Registry();
  // The event-loop lag histogram samples every 100 ms, not prom-client's 10 ms: a timer 100 times a second kept an
  // idle process awake (~11 % of an idle validator's CPU); a block of the loop still shows in full.
  if (options.defaultMetrics)
    collectDefaultMetrics({ register: registry, prefix: 'scriptorium_ledger_', eventLoopMonitoringPrecision: 100 });
  const registers = [registry];
  return {
    registry,
    height: new Gauge({ name: 'scriptorium_ledger_height', help: 'Height of the last finalized block', registers }),
    round: new Gauge({
      name: ROUND_METRIC,
      help: 'Current consensus round at the open height',
      registers,
    }),
    finalityLatency: new Histogram({
      name: 'scriptorium_ledger_finality_latency_seconds',
      help: 'Time from a record entering this node’s mempool to the finalization of its block',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    messagesIn: new Counter({
      name: 'scriptorium_ledger_messages_in_total',
      help: 'Consensus messages accepted at the gate, by type',
      labelNames: ['type'],
      registers,
    }),
    messagesOut: new Counter({
      name: 'scriptorium_ledger_messages_out_total',
      help: 'Consensus messages sent, by type (one per broadcast)',
      labelNames: ['type'],
      registers,
    }),
    inboundQueueDepth: new Gauge({
      name: 'scriptorium_ledger_inbound_queue_depth',
      help: 'Messages waiting in the inbound queue',
      registers,
    }),
    peers: new Gauge({
      name: 'scriptorium_ledger_peers',
      help: 'Peers in the registry (excluding this node)',
      registers,
    }),
    roundChanges: new Counter({
      name: ROUND_CHANGES_METRIC,
      help: 'Rounds this node moved past a round 0',
      registers,
    }),
    rejectedMessages: new Counter({
      name: 'scriptorium_ledger_rejected_messages_total',
      help: 'Inbound consensus messages rejected, by reason',
      labelNames: ['reason'],
      registers,
    }),
    recordsFinalized: new Counter({
      name: 'scriptorium_ledger_records_finalized_total',
      help: 'Records in finalized blocks',
      registers,
    }),
    recordsRegossiped: new Counter({
      name: 'scriptorium_ledger_records_regossiped_total',
      help: "This node's own records gossiped again because no block held them yet (their first gossip may be lost)",
      registers,
    }),
    gossipDropped: new Counter({
      name: 'scriptorium_ledger_gossip_dropped_total',
      help: 'Sends to a peer dropped because it had the most requests in flight, by connection pool (bulk: records, blocks, sync; consensus: votes)',
      labelNames: ['pool'],
      registers,
    }),
    mempoolSize: new Gauge({
      name: MEMPOOL_METRIC,
      help: 'Records waiting in the mempool',
      registers,
    }),
    isValidator: new Gauge({
      name: 'scriptorium_ledger_is_validator',
      help: '1 when this node is in the active set',
      registers,
    }),
    memoryTrims: new Counter({
      name: 'scriptorium_ledger_memory_trims_total',
      help: 'Last-resort collections run to give pooled heap pages back to the OS (memory-trim.ts)',
      registers,
    }),
    memoryTrimmedBytes: new Counter({
      name: 'scriptorium_ledger_memory_trimmed_bytes_total',
      help: 'Resident memory those collections gave back',
      registers,
    }),
  };
}
