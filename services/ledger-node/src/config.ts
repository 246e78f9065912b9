// Node configuration, read once from the environment and validated with the settings schema of
// @scriptorium/ledger-protocol (every variable's name, type and default live there).
// Nested names use `__`; a secret may come from `<NAME>_FILE`. A bad value throws a ConfigError
// whose message is one line naming the variable (main prints it and exits 2).
import { readFileSync } from 'node:fs';
import {
  type NodeSettings,
  nodeSettings,
  type PeerSpec,
  parseHostPort,
  parsePeerSpec,
  SECRET_SETTINGS,
  type WitnessEndpoint,
} from '@scriptorium/ledger-protocol';
import { type WatcherConfig, watcherConfig } from './broker/config.ts';
import { ConfigError } from './errors.ts';
import { type NotifyConfig, notifyConfig } from './notify/config.ts';

export interface TlsConfig {
  mode: 'server' | 'mutual';
  cert: Buffer;
  key: Buffer;
  ca: Buffer | undefined;
}

export interface NodeConfig {
  bindHost: string;
  bindPort: number;
  /** host:port peers should use to reach this node. */
  advertise: { host: string; port: number };
  nodeId: string | undefined;
  roundTimeoutMs: number;
  maxBlockRecords: number;
  maxBlockBytes: number;
  inboundQueue: number;
  blockDelayMs: number;
  emptyBlockIntervalMs: number;
  keyFile: string;
  genesisFile: string;
  dataDir: string;
  seedPeers: PeerSpec[];
  clusterToken: string | undefined;
  debugApi: boolean;
  tls: TlsConfig | undefined;
  maxBodyBytes: number;
  rateLimit: { rps: number; burst: number };
  mempoolMax: number;
  /** NODE_MEMPOOL__REGOSSIP_AFTER_MS: when this node's own pending records are gossiped again (0 = never). */
  mempoolRegossipAfterMs: number;
  announceIntervalMs: number;
  /** NODE_PEERS__FORGET_AFTER_MS: a peer outside the validator set unreachable this long is forgotten. */
  forgetUnreachableAfterMs: number;
  syncIntervalMs: number;
  logLevel: string;
  /** The broker watcher; undefined when NODE_BROKER__PRIMARY_URL is unset. */
  watcher: WatcherConfig | undefined;
  notify: NotifyConfig;
  checkpoints: CheckpointConfig;
}

/** Checkpoints and witnessing (docs/ledger-node.md, "Checkpoints and witnesses"). */
export interface CheckpointConfig {
  /** Origin line; undefined: derived from the chain id. */
  origin: string | undefined;
  intervalMs: number;
  witnesses: WitnessEndpoint[];
  /** How many witnesses make a checkpoint witnessed (1 ≤ threshold ≤ witnesses; 0 without witnesses). */
  threshold: number;
}

type Env = Record<string, string | undefined>;

function readSecretFile(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(variable, `cannot read file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

function readFileVar(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(variable, `cannot read file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/** `host:port`, the host bracketed when it is an IPv6 address. */
const hostPort = (a: { host: string; port: number }) => `${a.host.includes(':') ? `[${a.host}]` : a.host}:${a.port}`;

/** Reads and validates the configuration. Throws ConfigError (one line, naming the variable).
 * @example const config = loadConfig(process.env); */
export function loadConfig(env: Env): NodeConfig {
  const raw: Env = {};
  for (const key of Object.keys(nodeSettings.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  // A secret may come from <NAME>_FILE; both at once is ambiguous.
  for (const name of SECRET_SETTINGS) {
    const fileVariable = `${name}_FILE`;
    const file = env[fileVariable];
    if (!file) continue;
    if (raw[name] !== undefined) throw new ConfigError(fileVariable, `set either ${name} or ${fileVariable}, not both`);
    raw[name] = readSecretFile(fileVariable, file);
  }
  const parsed = nodeSettings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    // Never echo the token's value.
    throw new ConfigError(variable, issue?.message ?? 'invalid value');
  }
  const e = parsed.data;

  const seedPeers: PeerSpec[] = [];
  for (const part of e.NODE_PEERS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const peer = parsePeerSpec(part);
    if (typeof peer === 'string') throw new ConfigError('NODE_PEERS', peer);
    seedPeers.push(peer);
  }

  let advertise: { host: string; port: number };
  if (e.NODE_CONSENSUS__ADVERTISE) {
    const hp = parseHostPort(e.NODE_CONSENSUS__ADVERTISE);
    if (typeof hp === 'string') throw new ConfigError('NODE_CONSENSUS__ADVERTISE', hp);
    advertise = hp;
  } else {
    const host =
      e.NODE_CONSENSUS__BIND_HOST === '0.0.0.0' || e.NODE_CONSENSUS__BIND_HOST === '::'
        ? '127.0.0.1'
        : e.NODE_CONSENSUS__BIND_HOST;
    advertise = { host, port: e.NODE_CONSENSUS__BIND_PORT };
  }

  let tls: TlsConfig | undefined;
  if (e.NODE_TLS__ENABLED) {
    if (!e.NODE_TLS__CERT_FILE) throw new ConfigError('NODE_TLS__CERT_FILE', 'required when NODE_TLS__ENABLED is true');
    if (!e.NODE_TLS__KEY_FILE) throw new ConfigError('NODE_TLS__KEY_FILE', 'required when NODE_TLS__ENABLED is true');
    if (e.NODE_TLS__MODE === 'mutual' && !e.NODE_TLS__CA_FILE)
      throw new ConfigError('NODE_TLS__CA_FILE', 'required when NODE_TLS__MODE is mutual');
    tls = {
      mode: e.NODE_TLS__MODE,
      cert: readFileVar('NODE_TLS__CERT_FILE', e.NODE_TLS__CERT_FILE),
      key: readFileVar('NODE_TLS__KEY_FILE', e.NODE_TLS__KEY_FILE),
      ca: e.NODE_TLS__CA_FILE ? readFileVar('NODE_TLS__CA_FILE', e.NODE_TLS__CA_FILE) : undefined,
    };
    // Another organization's CA bundle: trusted as the cluster CA is, for servers and client certificates alike.
    if (e.NODE_TLS__EXTRA_CA_FILE) {
      if (!tls.ca) throw new ConfigError('NODE_TLS__EXTRA_CA_FILE', 'needs NODE_TLS__CA_FILE');
      tls.ca = Buffer.concat([
        tls.ca,
        Buffer.from('\n'),
        readFileVar('NODE_TLS__EXTRA_CA_FILE', e.NODE_TLS__EXTRA_CA_FILE),
      ]);
    }
  }

  return {
    bindHost: e.NODE_CONSENSUS__BIND_HOST,
    bindPort: e.NODE_CONSENSUS__BIND_PORT,
    advertise,
    nodeId: e.NODE_ID,
    roundTimeoutMs: e.NODE_CONSENSUS__ROUND_TIMEOUT_MS,
    maxBlockRecords: e.NODE_CONSENSUS__MAX_BLOCK_RECORDS,
    maxBlockBytes: e.NODE_CONSENSUS__MAX_BLOCK_BYTES,
    inboundQueue: e.NODE_CONSENSUS__INBOUND_QUEUE,
    blockDelayMs: e.NODE_CONSENSUS__BLOCK_DELAY_MS,
    emptyBlockIntervalMs: e.NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS,
    keyFile: e.NODE_KEY_FILE,
    genesisFile: e.NODE_GENESIS_FILE,
    dataDir: e.NODE_DATA_DIR,
    seedPeers,
    clusterToken: e.NODE_CLUSTER_TOKEN,
    debugApi: e.NODE_DEBUG_API,
    tls,
    maxBodyBytes: e.MAX_BODY_BYTES,
    rateLimit: { rps: e.NODE_RATE_LIMIT__RPS, burst: e.NODE_RATE_LIMIT__BURST },
    mempoolMax: e.NODE_MEMPOOL__MAX_RECORDS,
    mempoolRegossipAfterMs: e.NODE_MEMPOOL__REGOSSIP_AFTER_MS,
    announceIntervalMs: e.NODE_PEERS__ANNOUNCE_INTERVAL_MS,
    forgetUnreachableAfterMs: e.NODE_PEERS__FORGET_AFTER_MS,
    syncIntervalMs: e.NODE_SYNC__INTERVAL_MS,
    logLevel: e.LOG_LEVEL,
    watcher: watcherConfig(e, `${tls ? 'https' : 'http'}://${hostPort(advertise)}`),
    notify: notifyConfig(e),
    checkpoints: checkpointConfig(e),
  };
}

function checkpointConfig(e: NodeSettings): CheckpointConfig {
  const witnesses = e.NODE_WITNESS__WITNESSES;
  const threshold = e.NODE_WITNESS__THRESHOLD ?? witnesses.length;
  if (witnesses.length > 0 && threshold > witnesses.length)
    throw new ConfigError('NODE_WITNESS__THRESHOLD', `${threshold} is more than the ${witnesses.length} witnesses`);
  if (witnesses.length === 0 && e.NODE_WITNESS__THRESHOLD !== undefined)
    throw new ConfigError('NODE_WITNESS__THRESHOLD', 'set without NODE_WITNESS__WITNESSES');
  return { origin: e.NODE_CHECKPOINT__ORIGIN, intervalMs: e.NODE_CHECKPOINT__INTERVAL_MS, witnesses, threshold };
}
