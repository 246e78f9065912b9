// The watcher's metrics (prefix scriptorium_ledger_), registered on the node's own registry.
import { MISSED_CHANGES_METRIC } from '@scriptorium/ledger-protocol';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface WatcherMetrics {
  brokerUp: Gauge<'broker'>;
  brokerEntities: Gauge<'broker'>;
  readFailures: Counter<'broker' | 'reason'>;
  passSeconds: Histogram<'kind'>;
  recordsSubmitted: Counter<'verdict'>;
  unreadableEntities: Gauge<'broker'>;
  primaryRestricted: Gauge<'broker'>;
  missedChanges: Counter<'broker'>;
  subscribed: Gauge<'broker'>;
  subscriptionsMade: Counter<'broker' | 'reason'>;
  notifications: Counter<'result'>;
  notifiedPending: Gauge;
  notifiedSeconds: Histogram;
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
      help: 'Duration of one comparison pass (every broker read and judged), by kind (full or incremental)',
      labelNames: ['kind'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 20, 60, 120],
      registers,
    }),
    recordsSubmitted: new Counter({
      name: 'scriptorium_ledger_watch_records_total',
      help: 'Integrity records the watcher handed to the mempool, by verdict',
      labelNames: ['verdict'],
      registers,
    }),
    unreadableEntities: new Gauge({
      name: 'scriptorium_ledger_broker_unreadable_entities',
      help: 'Entities the last read of the broker listed but the watcher could not read (reported and skipped)',
      labelNames: ['broker'],
      registers,
    }),
    primaryRestricted: new Gauge({
      name: 'scriptorium_ledger_broker_primary_restricted',
      help: "1 when the primary's listing is known to hold its own data only, 0 when it may hold federated data",
      labelNames: ['broker'],
      registers,
    }),
    missedChanges: new Counter({
      name: MISSED_CHANGES_METRIC,
      help: 'Changes a sweep found that no notification had announced (subscribe mode)',
      labelNames: ['broker'],
      registers,
    }),
    subscribed: new Gauge({
      name: 'scriptorium_ledger_broker_subscribed',
      help: "1 while this node's subscription to the broker is known to exist (subscribe mode)",
      labelNames: ['broker'],
      registers,
    }),
    subscriptionsMade: new Counter({
      name: 'scriptorium_ledger_broker_subscriptions_total',
      help: 'Subscriptions this node made, by reason (new; forgotten: the broker had lost the previous one; silent: it notified nothing while changes were missed)',
      labelNames: ['broker', 'reason'],
      registers,
    }),
    notifications: new Counter({
      name: 'scriptorium_ledger_watch_notifications_total',
      help: 'Notifications received, by result (accepted, unauthorized, malformed, overflow: some entities dropped)',
      labelNames: ['result'],
      registers,
    }),
    notifiedPending: new Gauge({
      name: 'scriptorium_ledger_watch_notified_pending',
      help: 'Entities notifications announced that wait to be judged',
      registers,
    }),
    notifiedSeconds: new Histogram({
      name: 'scriptorium_ledger_watch_notified_seconds',
      help: 'From a notification to its entities judged (records handed to the mempool)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
  };
}
