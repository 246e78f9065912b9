// What the validators need to watch the context brokers and notify tampering: the node settings
// from `spec.brokers`, `spec.notifications` and `spec.consensus.blockIntervalMs`, and the Secrets
// they reference mounted as files (only the referenced key, read-only). Secret values never appear
// in an environment value or in status. The settings are part of each validator's StatefulSet, so
// changing them rolls the validators one at a time, as an image change does.
import type { NodeEnvVar } from '@scriptorium/ledger-protocol';
import { type LedgerClusterSpec, SYSLOG_URL } from '../../api/index.ts';

/** Mount folders of the referenced Secrets. */
export const WATCH_PATHS = {
  brokerCaDir: '/etc/ledger-node/broker-ca',
  brokerTokenDir: '/etc/ledger-node/broker-token',
  webhookSecretDir: '/etc/ledger-node/webhook-secret',
} as const;

const SECRET_MODE = 0o440;

interface SecretFile {
  volume: string;
  dir: string;
  secretName: string;
  key: string;
}

/** The sinks that receive tamper events (all events when a sink lists none). */
function tamperSinks(spec: LedgerClusterSpec) {
  return spec.notifications.filter((n) => !n.events || n.events.includes('tamper'));
}

function secretFiles(spec: LedgerClusterSpec): SecretFile[] {
  const files: SecretFile[] = [];
  const b = spec.brokers;
  if (b?.caSecretRef)
    files.push({
      volume: 'broker-ca',
      dir: WATCH_PATHS.brokerCaDir,
      secretName: b.caSecretRef.name,
      key: b.caSecretRef.key,
    });
  if (b?.authTokenSecretRef)
    files.push({
      volume: 'broker-token',
      dir: WATCH_PATHS.brokerTokenDir,
      secretName: b.authTokenSecretRef.name,
      key: b.authTokenSecretRef.key,
    });
  const signed = tamperSinks(spec).find((n) => !SYSLOG_URL.test(n.url) && n.secretRef);
  if (signed?.secretRef)
    files.push({
      volume: 'webhook-secret',
      dir: WATCH_PATHS.webhookSecretDir,
      secretName: signed.secretRef.name,
      key: signed.secretRef.key,
    });
  return files;
}

/** The file the node reads a mounted secret from: the key's own name inside its folder. */
const filePath = (f: SecretFile) => `${f.dir}/${f.key}`;

/** Node settings for the watcher, the notifications and block timing (batching delay, empty-block interval). */
export function watchEnv(spec: LedgerClusterSpec): NodeEnvVar[] {
  const env: NodeEnvVar[] = [];
  if (spec.consensus.blockIntervalMs > 0)
    env.push({ name: 'NODE_CONSENSUS__BLOCK_DELAY_MS', value: String(spec.consensus.blockIntervalMs) });
  env.push({ name: 'NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS', value: String(spec.consensus.emptyBlockIntervalMs) });
  const files = new Map(secretFiles(spec).map((f) => [f.volume, f]));
  const b = spec.brokers;
  if (b) {
    env.push({ name: 'NODE_BROKER__PRIMARY_URL', value: b.primary.url });
    if (b.federated.length > 0)
      env.push({ name: 'NODE_BROKER__FEDERATED_URLS', value: b.federated.map((f) => f.url).join(',') });
    env.push({ name: 'NODE_BROKER__API', value: b.api });
    if (b.tenant) env.push({ name: 'NODE_BROKER__SERVICE', value: b.tenant });
    if (b.servicePath) env.push({ name: 'NODE_BROKER__SERVICE_PATH', value: b.servicePath });
    env.push({ name: 'NODE_BROKER__POLL_INTERVAL_MS', value: String(b.pollIntervalSeconds * 1000) });
    // Subscribe mode: brokers notify each validator at its advertised address (the node's default notify URL).
    env.push({ name: 'NODE_BROKER__MODE', value: b.mode });
    if (b.mode === 'subscribe')
      env.push({ name: 'NODE_BROKER__SWEEP_INTERVAL_MS', value: String(b.sweepIntervalSeconds * 1000) });
    const ca = files.get('broker-ca');
    if (ca) env.push({ name: 'NODE_BROKER__TLS_CA_FILE', value: filePath(ca) });
    const token = files.get('broker-token');
    if (token) env.push({ name: 'NODE_BROKER__AUTH_TOKEN_FILE', value: filePath(token) });
  }
  const sinks = tamperSinks(spec);
  const webhooks = sinks.filter((n) => !SYSLOG_URL.test(n.url)).map((n) => n.url);
  if (webhooks.length > 0) env.push({ name: 'NODE_NOTIFY__WEBHOOK_URLS', value: webhooks.join(',') });
  const secret = files.get('webhook-secret');
  if (secret) env.push({ name: 'NODE_NOTIFY__WEBHOOK_SECRET_FILE', value: filePath(secret) });
  const syslog = sinks.find((n) => SYSLOG_URL.test(n.url));
  if (syslog) env.push({ name: 'NODE_NOTIFY__SYSLOG', value: syslog.url });
  return env;
}

/** Volumes and mounts of the referenced Secrets (each with only its key, read-only). */
export function watchVolumes(spec: LedgerClusterSpec): { volumes: object[]; mounts: object[] } {
  const volumes: object[] = [];
  const mounts: object[] = [];
  for (const f of secretFiles(spec)) {
    volumes.push({
      name: f.volume,
      secret: { secretName: f.secretName, defaultMode: SECRET_MODE, items: [{ key: f.key, path: f.key }] },
    });
    mounts.push({ name: f.volume, mountPath: f.dir, readOnly: true });
  }
  return { volumes, mounts };
}
