import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The operator's Prometheus metrics, on one registry served at /metrics. */
export function createMetrics(registry = new Registry(), options: { defaults?: boolean } = {}) {
  // Process metrics (RSS, heap, event-loop lag, GC) with the scriptorium_operator_ prefix.
  if (options.defaults !== false) collectDefaultMetrics({ register: registry, prefix: 'scriptorium_operator_' });
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'scriptorium_operator_reconcile_total',
      help: 'Reconciles run, by controller and result (success, error, requeue).',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: 'scriptorium_operator_reconcile_errors_total',
      help: 'Reconciles that failed, by controller and error code.',
      labelNames: ['controller', 'code'],
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: 'scriptorium_operator_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'scriptorium_operator_workqueue_depth',
      help: 'Keys waiting in the work queue.',
      labelNames: ['controller'],
      registers: [registry],
    }),
    writes: new Counter({
      name: 'scriptorium_operator_writes_total',
      help: 'Writes to child objects and status (create, apply, delete, status), by kind.',
      labelNames: ['controller', 'kind', 'verb'],
      registers: [registry],
    }),
    leader: new Gauge({
      name: 'scriptorium_operator_leader',
      help: '1 while this replica holds the leader Lease.',
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: 'scriptorium_operator_watch_restarts_total',
      help: 'Watches restarted after an error, by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
