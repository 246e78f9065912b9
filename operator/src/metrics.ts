import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** The operator's Prometheus metrics, on one registry served at /metrics. */
export function createMetrics(registry = new Registry(), options: { defaults?: boolean } = {}) {
  // Process metrics (RSS, heap, event-loop lag, GC) with the scriptorium_operator_ prefix.
  // The event-loop lag histogram samples every 100 ms, not prom-client's 10 ms: a timer 100 times a second kept an
  // idle process awake (~11 % of an idle validator's CPU); a block of the loop still shows in full.
  if (options.defaults !== false)
    collectDefaultMetrics({ register: registry, prefix: 'scriptorium_operator_', eventLoopMonitoringPrecision: 100 });
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
    ledger: ledgerGauges(registry),
    ledgerWitness: witnessGauges(registry),
  };
}

/** What the LedgerCluster reconciler saw of each cluster at its last look (labels: namespace, name). */
function ledgerGauges(registry: Registry) {
  const gauge = (name: string, help: string) =>
    new Gauge({
      name: `scriptorium_operator_ledger_${name}`,
      help,
      labelNames: ['namespace', 'name'],
      registers: [registry],
    });
  return {
    height: gauge('height', 'Highest finalized height a validator reports.'),
    round: gauge('round', 'Highest round a validator is in at its open height.'),
    pendingRecords: gauge('pending_records', 'Records waiting in the fullest mempool.'),
    secondsSinceHeightChange: gauge(
      'seconds_since_height_change',
      'Seconds since the operator first saw the current height.',
    ),
    stalled: gauge(
      'stalled',
      '1 while no block is finalized for stallAfterSeconds with work pending (Progressing=False, Stalled).',
    ),
    roundChangeStorm: gauge(
      'round_change_storm',
      '1 while a validator is at roundChangeStormRound or higher (RoundChangeStorm=True).',
    ),
    activeValidators: gauge('active_validators', 'Validators in the active set.'),
    reachableValidators: gauge('reachable_validators', 'Active validators run by the operator whose API answers.'),
    unreachableValidators: gauge('unreachable_validators', 'Validators the operator runs whose API does not answer.'),
    quorumAtRisk: gauge(
      'quorum_at_risk',
      '1 while fewer active validators answer (with the external ones) than the quorum needs.',
    ),
    quorum: gauge('quorum', 'Validators needed to finalize a block (N - floor((N-1)/3)).'),
    backupHeight: gauge('backup_height', 'Height of the last successful backup of the chain.'),
    backupAgeSeconds: gauge('backup_age_seconds', 'Seconds since the last successful backup finished.'),
    backupBehind: gauge(
      'backup_behind',
      '1 while no backup succeeded within spec.backup.maxAgeSeconds (BackupBehind=True).',
    ),
    backupVerified: gauge(
      'backup_verified',
      '1 when the last restore drill verified the backup, 0 when it failed (BackupVerified).',
    ),
    backupVerifiedHeight: gauge('backup_verified_height', 'Height the last successful restore drill verified.'),
    witnessed: gauge(
      'witnessed',
      '0 while blocks have been in no checkpoint the witness policy is met by for unwitnessedAfterSeconds (Witnessed=False), else 1.',
    ),
    unwitnessedSeconds: gauge(
      'unwitnessed_seconds',
      "Age of the oldest block no checkpoint cosigned by the policy's threshold of witnesses covers (0: all covered).",
    ),
  };
}

/** Per witness of each cluster (labels: namespace, name, witness). */
function witnessGauges(registry: Registry) {
  const gauge = (name: string, help: string) =>
    new Gauge({
      name: `scriptorium_operator_ledger_witness_${name}`,
      help,
      labelNames: ['namespace', 'name', 'witness'],
      registers: [registry],
    });
  return {
    cosignedSize: gauge('cosigned_size', 'Largest checkpoint size the witness cosigned.'),
    behind: gauge('behind_blocks', "Blocks the witness's latest cosigned checkpoint does not cover."),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
