// The operator process, started by main.ts (the image's ENTRYPOINT): configuration, the client, the controllers.
import pino from 'pino';
import { loadConfig } from './config.ts';
import { KubeClient } from './kube/client.ts';
import { type KubeAccess, loadStatic } from './kube/kubeconfig.ts';
import { Operator } from './operator.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

// Secret values never reach a log line: the operator never logs objects, and these paths are redacted anyway.
const log = pino({
  level: config.LOG_LEVEL,
  base: { component: 'operator', pod: config.POD_NAME },
  redact: ['*.data', '*.stringData', 'data', 'stringData', '*.headers.authorization'],
});

let kc: KubeAccess;
try {
  // Static credentials (in-cluster, certificates, tokens) need no client-node: its import costs ~60 MB of RSS.
  const simple = loadStatic(config.KUBECONFIG);
  if (simple) kc = simple;
  else {
    const { KubeConfig } = await import('@kubernetes/client-node');
    const full = new KubeConfig();
    if (config.KUBECONFIG) full.loadFromFile(config.KUBECONFIG);
    else full.loadFromDefault();
    kc = full;
  }
} catch (err) {
  console.error(`invalid configuration: KUBECONFIG: ${(err as Error).message}`);
  process.exit(2);
}
const client = new KubeClient(kc);

const operator = new Operator({
  client,
  log,
  identity: config.POD_NAME,
  leaseNamespace: config.POD_NAMESPACE,
  leaseName: config.LEADER_ELECTION__LEASE_NAME,
  leaderElection: config.LEADER_ELECTION__ENABLED,
  leaseDurationMs: config.LEADER_ELECTION__LEASE_DURATION_SECONDS * 1000,
  renewDeadlineMs: config.LEADER_ELECTION__RENEW_DEADLINE_SECONDS * 1000,
  retryPeriodMs: config.LEADER_ELECTION__RETRY_PERIOD_SECONDS * 1000,
  watchNamespace: config.WATCH_NAMESPACE,
  concurrency: config.RECONCILE__CONCURRENCY,
  resyncMs: config.RESYNC_SECONDS * 1000,
  httpPort: config.HTTP__PORT,
  httpHost: config.HTTP__HOST,
  onLostLeadership: () => {
    log.error('lost the leader Lease; exiting so a fresh process can campaign again');
    process.exit(1);
  },
});

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  // Arm the deadline before anything that could throw (a log write to a closed stdout), so a
  // stuck shutdown always ends.
  const timer = setTimeout(() => process.exit(1), 20_000);
  timer.unref();
  try {
    log.info({ signal }, 'shutting down');
    await operator.stop();
  } finally {
    client.close();
    log.info('stopped');
    process.exit(0);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await operator.start();
log.info({ port: operator.port, leaderElection: config.LEADER_ELECTION__ENABLED }, 'operator started');
