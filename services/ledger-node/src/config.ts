// Node configuration, read once from the environment and validated with zod.
// Nested names use `__`; a secret may come from `<NAME>_FILE`. A bad value throws a ConfigError
// whose message is one line naming the variable (main prints it and exits 2).
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './errors.ts';
import { type PeerSpec, parseHostPort, parsePeerSpec } from './network/peer-spec.ts';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'expected true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'expected a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** Every variable the node reads, with its default. The README lists the same table. */
const envSchema = z.object({
  NODE_CONSENSUS__BIND_PORT: int(0, 65535).default(8000),
  NODE_CONSENSUS__BIND_HOST: z.string().min(1).default('0.0.0.0'),
  NODE_CONSENSUS__ADVERTISE: z.string().optional(),
  NODE_CONSENSUS__ROUND_TIMEOUT_MS: int(10, 600_000).default(2000),
  NODE_CONSENSUS__MAX_BLOCK_RECORDS: int(1, 10_000).default(2000),
  NODE_CONSENSUS__MAX_BLOCK_BYTES: int(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  NODE_CONSENSUS__INBOUND_QUEUE: int(1, 1_000_000).default(10_000),
  NODE_CONSENSUS__BLOCK_DELAY_MS: int(0, 60_000).default(0),
  NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'expected 1-64 of [A-Za-z0-9._-]' })
    .optional(),
  NODE_KEY_FILE: z.string().min(1).default('node-key.json'),
  NODE_GENESIS_FILE: z.string().min(1).default('genesis.json'),
  NODE_DATA_DIR: z.string().min(1).default('data'),
  NODE_PEERS: z.string().default(''),
  NODE_CLUSTER_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  NODE_DEBUG_API: bool.default(false),
  NODE_TLS__ENABLED: bool.default(false),
  NODE_TLS__MODE: z.enum(['server', 'mutual'], { message: 'expected server or mutual' }).default('server'),
  NODE_TLS__CERT_FILE: z.string().min(1).optional(),
  NODE_TLS__KEY_FILE: z.string().min(1).optional(),
  NODE_TLS__CA_FILE: z.string().min(1).optional(),
  MAX_BODY_BYTES: int(1024, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  NODE_RATE_LIMIT__RPS: int(1, 10_000_000).default(2000),
  NODE_RATE_LIMIT__BURST: int(1, 10_000_000).default(4000),
  NODE_MEMPOOL__MAX_RECORDS: int(1, 10_000_000).default(200_000),
  NODE_PEERS__ANNOUNCE_INTERVAL_MS: int(100, 3_600_000).default(5000),
  NODE_SYNC__INTERVAL_MS: int(50, 3_600_000).default(1000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

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
  announceIntervalMs: number;
  syncIntervalMs: number;
  logLevel: string;
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

/** Reads and validates the configuration. Throws ConfigError (one line, naming the variable).
 * @example const config = loadConfig(process.env); */
export function loadConfig(env: Env): NodeConfig {
  const raw: Env = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  // A secret may come from <NAME>_FILE; both at once is ambiguous.
  if (env.NODE_CLUSTER_TOKEN_FILE) {
    if (raw.NODE_CLUSTER_TOKEN !== undefined)
      throw new ConfigError(
        'NODE_CLUSTER_TOKEN_FILE',
        'set either NODE_CLUSTER_TOKEN or NODE_CLUSTER_TOKEN_FILE, not both',
      );
    raw.NODE_CLUSTER_TOKEN = readSecretFile('NODE_CLUSTER_TOKEN_FILE', env.NODE_CLUSTER_TOKEN_FILE);
  }
  const parsed = envSchema.safeParse(raw);
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
    announceIntervalMs: e.NODE_PEERS__ANNOUNCE_INTERVAL_MS,
    syncIntervalMs: e.NODE_SYNC__INTERVAL_MS,
    logLevel: e.LOG_LEVEL,
  };
}
