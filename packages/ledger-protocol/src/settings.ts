// The node's settings: every environment variable it reads, with its type and default, validated with zod
// at start. The node loads them (services/ledger-node/src/config.ts) and the operator builds validator
// environments from the same names, so a misspelt or unknown variable fails `tsc` on the operator's side.
// Nested names use `__` (NODE_CONSENSUS__BIND_PORT); a secret may come from `<NAME>_FILE` instead.
import { z } from 'zod';
import { MAX_RECORDS_PER_BLOCK } from './schemas.ts';

/** "true"/"false" (also 1/0, yes/no, on/off) to a boolean. */
export const boolSetting = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], { message: 'expected true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes' || v === 'on');

/** A whole number in [min, max], given as decimal digits. */
export const intSetting = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: 'expected a whole number' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

/** Every variable the node reads, with its default. services/ledger-node/README.md lists the same table. */
export const nodeSettings = z.object({
  // Consensus and the listening socket.
  NODE_CONSENSUS__BIND_PORT: intSetting(0, 65535).default(8000),
  NODE_CONSENSUS__BIND_HOST: z.string().min(1).default('0.0.0.0'),
  NODE_CONSENSUS__ADVERTISE: z.string().optional(),
  NODE_CONSENSUS__ROUND_TIMEOUT_MS: intSetting(10, 600_000).default(2000),
  NODE_CONSENSUS__MAX_BLOCK_RECORDS: intSetting(1, MAX_RECORDS_PER_BLOCK).default(2000),
  NODE_CONSENSUS__MAX_BLOCK_BYTES: intSetting(1024, 64 * 1024 * 1024).default(4 * 1024 * 1024),
  NODE_CONSENSUS__INBOUND_QUEUE: intSetting(1, 1_000_000).default(10_000),
  NODE_CONSENSUS__BLOCK_DELAY_MS: intSetting(0, 60_000).default(0),
  /** An idle chain proposes an empty block this long after a height opened; 0 = never. */
  NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: intSetting(0, 86_400_000).default(60_000),
  // Identity, files and storage.
  NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'expected 1-64 of [A-Za-z0-9._-]' })
    .optional(),
  NODE_KEY_FILE: z.string().min(1).default('node-key.json'),
  NODE_GENESIS_FILE: z.string().min(1).default('genesis.json'),
  NODE_DATA_DIR: z.string().min(1).default('data'),
  // Peers, authentication and the debug API.
  NODE_PEERS: z.string().default(''),
  NODE_CLUSTER_TOKEN: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  NODE_DEBUG_API: boolSetting.default(false),
  // TLS for the API and all peer traffic.
  NODE_TLS__ENABLED: boolSetting.default(false),
  NODE_TLS__MODE: z.enum(['server', 'mutual'], { message: 'expected server or mutual' }).default('server'),
  NODE_TLS__CERT_FILE: z.string().min(1).optional(),
  NODE_TLS__KEY_FILE: z.string().min(1).optional(),
  NODE_TLS__CA_FILE: z.string().min(1).optional(),
  // Limits and loops.
  MAX_BODY_BYTES: intSetting(1024, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  NODE_RATE_LIMIT__RPS: intSetting(1, 10_000_000).default(2000),
  NODE_RATE_LIMIT__BURST: intSetting(1, 10_000_000).default(4000),
  NODE_MEMPOOL__MAX_RECORDS: intSetting(1, 10_000_000).default(200_000),
  NODE_PEERS__ANNOUNCE_INTERVAL_MS: intSetting(100, 3_600_000).default(5000),
  NODE_SYNC__INTERVAL_MS: intSetting(50, 3_600_000).default(1000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // The broker watcher: no watcher when NODE_BROKER__PRIMARY_URL is unset.
  NODE_BROKER__PRIMARY_URL: z.string().min(1).optional(),
  /** Comma-separated base URLs. */
  NODE_BROKER__FEDERATED_URLS: z.string().default(''),
  NODE_BROKER__API: z.enum(['ngsi-v2', 'ngsi-ld'], { message: 'expected ngsi-v2 or ngsi-ld' }).default('ngsi-v2'),
  /** Fiware-Service (NGSI-v2) or NGSILD-Tenant (NGSI-LD). */
  NODE_BROKER__SERVICE: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,50}$/, { message: 'expected 1-50 of [A-Za-z0-9_-]' })
    .optional(),
  /** Fiware-ServicePath (NGSI-v2): absolute, up to 10 comma-separated, `/#` suffix recurses. */
  NODE_BROKER__SERVICE_PATH: z
    .string()
    .max(1024)
    .regex(/^\/[A-Za-z0-9_/#,]*$/, { message: 'expected an absolute service path such as /city or /city/#' })
    .optional(),
  NODE_BROKER__TLS_CA_FILE: z.string().min(1).optional(),
  /** X-Auth-Token for brokers behind a PEP proxy (a secret: also NODE_BROKER__AUTH_TOKEN_FILE). */
  NODE_BROKER__AUTH_TOKEN: z.string().min(1).max(8192).optional(),
  NODE_BROKER__POLL_INTERVAL_MS: intSetting(100, 86_400_000).default(10_000),
  /**
   * `poll`: every poll interval, read every broker completely. `subscribe`: subscribe to every broker, judge each
   * notified entity at once, and sweep (read everything, incrementally where the broker can) every sweep interval.
   */
  NODE_BROKER__MODE: z.enum(['poll', 'subscribe'], { message: 'expected poll or subscribe' }).default('poll'),
  /** Subscribe mode: time between this node's sweeps (the validators take turns: i/n of it apart). */
  NODE_BROKER__SWEEP_INTERVAL_MS: intSetting(100, 86_400_000).default(600_000),
  /** Subscribe mode: base URL the brokers send notifications to (default: this node's advertised address). */
  NODE_BROKER__NOTIFY_URL: z.string().min(1).max(2048).optional(),
  /** Subscribe mode: how often each subscription is checked (re-created when a broker forgot it). */
  NODE_BROKER__SUBSCRIPTION_CHECK_MS: intSetting(100, 3_600_000).default(30_000),
  // Tamper notifications (after finality).
  /** Comma-separated webhook URLs. */
  NODE_NOTIFY__WEBHOOK_URLS: z.string().default(''),
  /** HMAC-SHA256 key of the webhook signature header (a secret: also NODE_NOTIFY__WEBHOOK_SECRET_FILE). */
  NODE_NOTIFY__WEBHOOK_SECRET: z.string().min(16, { message: 'must be at least 16 characters' }).optional(),
  /** udp://host:port or tcp://host:port (RFC 5424; TCP with octet counting). */
  NODE_NOTIFY__SYSLOG: z.string().min(1).optional(),
  /** How long each backup validator waits, per rank, before delivering what the proposer may not have. */
  NODE_NOTIFY__TAKEOVER_GRACE_MS: intSetting(0, 3_600_000).default(10_000),
});

export type NodeSettings = z.output<typeof nodeSettings>;

/** Settings that are secrets: each may instead be read from the file named by `<NAME>_FILE` (not both). */
export const SECRET_SETTINGS = [
  'NODE_CLUSTER_TOKEN',
  'NODE_BROKER__AUTH_TOKEN',
  'NODE_NOTIFY__WEBHOOK_SECRET',
] as const satisfies ReadonlyArray<keyof NodeSettings>;

/** The name of every variable the node reads: the settings, and `<NAME>_FILE` for each secret. */
export type NodeSettingName = keyof NodeSettings | `${(typeof SECRET_SETTINGS)[number]}_FILE`;

/** Every name in `NodeSettingName`, at run time. */
export const NODE_SETTING_NAMES: readonly NodeSettingName[] = [
  ...(Object.keys(nodeSettings.shape) as Array<keyof NodeSettings>),
  ...SECRET_SETTINGS.map((name) => `${name}_FILE` as const),
];

/** One container environment variable whose name the node defines (Kubernetes `EnvVar` shape). */
export interface NodeEnvVar {
  name: NodeSettingName;
  value?: string;
  valueFrom?: object;
}
