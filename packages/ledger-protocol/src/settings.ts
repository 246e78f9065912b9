// The node's settings: every environment variable it reads, with its type and default, validated with zod
// at start. The node loads them (services/ledger-node/src/config.ts) and the operator builds validator
// environments from the same names, so a misspelt or unknown variable fails `tsc` on the operator's side.
// Nested names use `__` (NODE_CONSENSUS__BIND_PORT); a secret may come from `<NAME>_FILE` instead.
import * as z from 'zod';
import { ORIGIN_PATTERN } from './checkpoint.ts';
import { ALG_ED25519, isValidKeyName, parseVerifierKey } from './note.ts';
import { MAX_RECORDS_PER_BLOCK } from './schemas.ts';
import { witnessPolicy } from './witness-policy.ts';

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

/** One witness the validators submit checkpoints to: a name, its tlog-witness URL, its cosignature verifier key. */
export const WitnessEndpoint = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, { message: 'a witness name is 1-63 of [A-Za-z0-9._-]' }),
  url: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s?#@]+$/, { message: 'a witness URL is http(s)://host[:port][/prefix]' }),
  key: z.string().max(512),
});
export type WitnessEndpoint = z.infer<typeof WitnessEndpoint>;

/**
 * A JSON array of witnesses (NODE_WITNESS__WITNESSES), each key a tlog-cosignature verifier key, names and keys
 * distinct; '' is none.
 */
export const witnessEndpointsSetting = z.string().transform((text, ctx): WitnessEndpoint[] => {
  if (text.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a JSON array of {name, url, key}' });
    return z.NEVER;
  }
  const parsed = z.array(WitnessEndpoint).max(32).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    ctx.addIssue({ code: 'custom', message: `${issue?.path.join('.')}: ${issue?.message}` });
    return z.NEVER;
  }
  if (parsed.data.length > 0) {
    const policy = witnessPolicy(parsed.data);
    if (typeof policy === 'string') {
      ctx.addIssue({ code: 'custom', message: policy });
      return z.NEVER;
    }
  }
  return parsed.data;
});

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
  /** More CAs trusted for peer TLS besides the cluster CA: other organizations' validators of the same chain. */
  NODE_TLS__EXTRA_CA_FILE: z.string().min(1).optional(),
  // Limits and loops.
  MAX_BODY_BYTES: intSetting(1024, 256 * 1024 * 1024).default(8 * 1024 * 1024),
  NODE_RATE_LIMIT__RPS: intSetting(1, 10_000_000).default(2000),
  NODE_RATE_LIMIT__BURST: intSetting(1, 10_000_000).default(4000),
  NODE_MEMPOOL__MAX_RECORDS: intSetting(1, 10_000_000).default(200_000),
  /**
   * A record this node accepted itself and no block holds yet is gossiped again every this long until a validator
   * has taken it, then every 16 times as long; 0 = never (its one gossip may be lost).
   */
  NODE_MEMPOOL__REGOSSIP_AFTER_MS: intSetting(0, 3_600_000).default(10_000),
  NODE_PEERS__ANNOUNCE_INTERVAL_MS: intSetting(100, 3_600_000).default(5000),
  /** A peer outside the validator set that no announce round has reached for this long is forgotten. */
  NODE_PEERS__FORGET_AFTER_MS: intSetting(1000, 86_400_000).default(30_000),
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
  // Checkpoints and witnesses (C2SP tlog-checkpoint, tlog-witness; docs/ledger-node.md).
  /** The checkpoints' origin line; default scriptorium.dev/ledger/<chain id>. */
  NODE_CHECKPOINT__ORIGIN: z
    .string()
    .regex(ORIGIN_PATTERN, { message: 'printable ASCII without spaces or +, not starting with {' })
    .optional(),
  /** A new checkpoint at most once per interval (and one at every membership change). */
  NODE_CHECKPOINT__INTERVAL_MS: intSetting(100, 3_600_000).default(1000),
  /** JSON array of witnesses [{"name", "url", "key"}]; none when empty. */
  NODE_WITNESS__WITNESSES: witnessEndpointsSetting.default([]),
  /** How many witnesses must cosign a checkpoint for it to count as witnessed; default all of them. */
  NODE_WITNESS__THRESHOLD: intSetting(1, 32).optional(),
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

/** One log a witness follows: its origin, its validators' note keys (type 0x01, named by the origin), a quorum. */
export const WitnessLog = z
  .strictObject({
    origin: z.string().regex(ORIGIN_PATTERN, { message: 'an origin line' }),
    keys: z.array(z.string().max(512)).min(1).max(1000),
    /** Valid signatures from distinct known keys required; default the BFT quorum of the keys listed. */
    quorum: z.int().min(1).max(1000).optional(),
  })
  .superRefine((log, ctx) => {
    for (const [i, k] of log.keys.entries()) {
      const key = parseVerifierKey(k);
      if (typeof key === 'string') ctx.addIssue({ code: 'custom', path: ['keys', i], message: key });
      else if (key.alg !== ALG_ED25519 || key.name !== log.origin)
        ctx.addIssue({
          code: 'custom',
          path: ['keys', i],
          message: 'a log key is an Ed25519 note key (0x01) named by the origin',
        });
    }
    if (log.quorum !== undefined && log.quorum > log.keys.length)
      ctx.addIssue({ code: 'custom', path: ['quorum'], message: 'more than the keys listed' });
  });
export type WitnessLog = z.infer<typeof WitnessLog>;

/** `ledger-node witness`: every variable it reads. services/ledger-node/README.md lists the same table. */
export const witnessSettings = z.object({
  /** The witness's name in its cosignature lines (a URL-like name, e.g. witness.example.org/w1). */
  WITNESS_NAME: z.string().refine(isValidKeyName, { message: 'a key name: no spaces or +' }),
  /** Its Ed25519 key, in the node's key file format (`ledger-node keygen`). */
  WITNESS_KEY_FILE: z.string().min(1).default('witness-key.json'),
  /** What it cosigned last, per log (written atomically before each answer). */
  WITNESS_STATE_FILE: z.string().min(1).default('witness-state.json'),
  WITNESS_BIND_HOST: z.string().min(1).default('0.0.0.0'),
  WITNESS_BIND_PORT: intSetting(0, 65535).default(7380),
  /** JSON array of the logs it follows (or WITNESS_LOGS_FILE: a file holding it). */
  WITNESS_LOGS: z.string().optional(),
  WITNESS_LOGS_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});
export type WitnessSettings = z.output<typeof witnessSettings>;

/** One container environment variable whose name the node defines (Kubernetes `EnvVar` shape). */
export interface NodeEnvVar {
  name: NodeSettingName;
  value?: string;
  valueFrom?: object;
}

/**
 * The backup commands' settings (`ledger-node backup`, `restore`, `backup-verify`): the object store, the node
 * they read from, and where the result goes. The operator builds the backup Jobs and the restore init container
 * from the same names.
 */
export const backupSettings = z.object({
  /** `https://host:port` of the S3-compatible endpoint (path-style requests). */
  BACKUP__ENDPOINT: z.url({ protocol: /^https?$/, message: 'expected an http(s) URL' }),
  BACKUP__BUCKET: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { message: 'expected an S3 bucket name' }),
  /** Key prefix of the backup (no leading or trailing slash; '' = the bucket's root). */
  BACKUP__PREFIX: z
    .string()
    .max(512)
    .regex(/^([A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*)?$/, {
      message: 'expected path segments without leading or trailing /',
    })
    .default(''),
  BACKUP__REGION: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .default('us-east-1'),
  BACKUP__ACCESS_KEY_ID: z.string().min(1).max(256),
  BACKUP__SECRET_ACCESS_KEY: z.string().min(1).max(256),
  /** PEM CA bundle for the endpoint. */
  BACKUP__CA_FILE: z.string().min(1).optional(),
  /**
   * The nodes whose read API `backup` and `backup-verify` read: comma-separated `http(s)://host:port`; the one at
   * the highest height that answers is read.
   */
  BACKUP__NODE_URL: z
    .string()
    .max(8192)
    .regex(/^https?:\/\/[^\s,]+(,https?:\/\/[^\s,]+)*$/, { message: 'expected comma-separated http(s) URLs' })
    .optional(),
  /** PEM CA bundle for the node's HTTPS. */
  BACKUP__NODE_CA_FILE: z.string().min(1).optional(),
  /** A segment is closed once its blocks' JSON reaches this size. */
  BACKUP__SEGMENT_BYTES: intSetting(4096, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  /** Where the one-line JSON result is also written (a pod's termination message: /dev/termination-log). */
  BACKUP__RESULT_FILE: z.string().min(1).optional(),
  /** Where `backup-verify` restores the backup it verifies (removed after). Default: the OS temp folder. */
  BACKUP__SCRATCH_DIR: z.string().min(1).optional(),
  NODE_GENESIS_FILE: z.string().min(1).default('genesis.json'),
  NODE_DATA_DIR: z.string().min(1).default('data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type BackupSettings = z.output<typeof backupSettings>;

/** The backup settings that are secrets: each may instead come from `<NAME>_FILE`. */
export const BACKUP_SECRET_SETTINGS = [
  'BACKUP__ACCESS_KEY_ID',
  'BACKUP__SECRET_ACCESS_KEY',
] as const satisfies ReadonlyArray<keyof BackupSettings>;

export type BackupSettingName = keyof BackupSettings | `${(typeof BACKUP_SECRET_SETTINGS)[number]}_FILE`;

/** One container environment variable of the backup commands (Kubernetes `EnvVar` shape). */
export interface BackupEnvVar {
  name: BackupSettingName;
  value?: string;
  valueFrom?: object;
}
