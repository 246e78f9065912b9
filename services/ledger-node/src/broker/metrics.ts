// The watcher's metrics (prefix scriptorium_ledger_), registered on the node's own registry.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface WatcherMetrics {
  brokerUp: Gauge<'broker'>;
  brokerEntities: Gauge<'broker'>;
  readFailures: Counter<'broker' | 'reason'>;
  passSeconds: Histogram;
  recordsSubmitted: Counter<'verdict'>;
}

export function createWatcherMetrics(registry: Registry): WatcherMetrics {
  const registers = [registry];
  return {
    brokerUp: new Gauge({
      name: 'scriptorium_ledger_broker_up',
      help: '1 when the last read of the broker was complete, 0 when it failed (nothing recorded for it then)',
      labelNames: ['broker'],
      registers,
    }),
    brokerEntities: new Gauge({
      name: 'scriptorium_ledger_broker_entities',
      help: 'Entities the last complete read of the broker listed',
      labelNames: ['broker'],
      registers,
    }),
    readFailures: new Counter({
      name: 'scriptorium_ledger_broker_read_failures_total',
      help: 'Broker reads that could not complete, by reason (unreachable, timeout, http_status, malformed, inconsistent)',
      labelNames: ['broker', 'reason'],
      registers,
    }),
    passSeconds: new Histogram({
      name: 'scriptorium_ledger_watch_pass_seconds',
      help: 'Duration of one comparison pass (every broker read and judged)',
      buckets: [0.1, 0.5, 1, 2, 5, 10, 20, 60, 120],
      registers,
    }),
    recordsSubmitted: new Counter({
      name: 'scriptorium_ledger_watch_records_total',
      help: 'Integrity records the watcher handed to the mempool, by verdict',
      labelNames: ['verdict'],
      registers,
    }),
  };
}
