import { HOST_PORT_PATTERN, ORIGIN_PATTERN } from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import { conditions, type ObjectMeta, objectStore, quantity, resources, secretKeyRef, secretRef } from './common.ts';

export const LC_KIND = 'LedgerCluster';
export const LC_PLURAL = 'ledgerclusters';

const brokerEndpoint = z.object({
  name: z.string().min(1).max(63),
  url: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^https?:\/\/[^\s?#@]+$/, 'an http(s) base URL without credentials, query or fragment')
    .describe('Base URL of the context broker (also its name in integrity records).'),
});

/** A notification event type. `tamper`: a TAMPERED integrity record, sent by the validators after finality. */
export const NOTIFICATION_EVENTS = ['membership', 'fork', 'stall', 'anchor', 'tamper'] as const;

/** A cron schedule (five fields, or a @macro). */
const cronSchedule = z
  .string()
  .min(1)
  .max(100)
  .regex(
    /^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$/,
    'a cron schedule (five fields) or @hourly, @daily, …',
  );

/**
 * The annotation that asks for key rotation (GitOps; `kubectl scriptorium rotate-key` sets it): a validator name,
 * or several comma-separated, rotated one at a time in that order. A new value is a new request.
 */
export const ROTATE_KEY_ANNOTATION = 'scriptorium.dev/rotate-key';

/** A tlog-cosignature/v1 Ed25519 verifier key (type 0x04): `<name>+<key id>+<base64 of 0x04 ‖ key>`. */
export const COSIGNATURE_KEY_PATTERN = /^[^\s+]{1,256}\+[0-9a-f]{8}\+B[A-Za-z0-9+/]{43}$/;
const COSIGNATURE_KEY_MESSAGE = 'a tlog-cosignature Ed25519 verifier key: <name>+<key id>+<base64 of 0x04 and the key>';

const witness = z.object({
  name: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
    .max(63)
    .describe("Name of the witness in status, metrics and readers' policies (a DNS label)."),
  url: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s?#@]+$/, 'an http(s) URL without credentials, query or fragment')
    .describe('Its C2SP tlog-witness submission prefix: the validators POST <url>/add-checkpoint.'),
  key: z
    .string()
    .max(512)
    .regex(COSIGNATURE_KEY_PATTERN, COSIGNATURE_KEY_MESSAGE)
    // The API server's refusal of a pattern quotes only the pattern; the rule says what the key must be.
    .meta({
      'x-kubernetes-validations': [
        {
          rule: `self.matches('${COSIGNATURE_KEY_PATTERN.source.replaceAll('\\', '\\\\')}')`,
          message: COSIGNATURE_KEY_MESSAGE,
        },
      ],
    })
    .describe('Its Ed25519 note verifier key (C2SP tlog-cosignature/v1, type 0x04), as the witness publishes it.'),
});

/** Notification URLs that are syslog targets rather than webhooks. */
export const SYSLOG_URL = /^(udp|tcp):\/\//;

export const ledgerClusterSpec = z
  .object({
    image: z.string().min(1).max(512).describe('Container image of the ledger node.'),
    validators: z.int().max(100).describe('Number of validators the operator runs (scale subresource).'),
    resources: resources
      .optional()
      .describe(
        "Compute resources of each validator's container, as in a Pod spec (default: requests 100m CPU and 128Mi, limit 512Mi of memory).",
      ),
    retire: z
      .array(z.string().min(1).max(63))
      .max(100)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'set' })
      .describe('Names of validators to retire (any one, not only the last).'),
    externalValidators: z
      .array(
        z.object({
          publicKey: z
            .string()
            .regex(/^[0-9a-f]{64}$/)
            .describe('Ed25519 public key, 64 hex characters.'),
          address: z.string().min(1).max(512).regex(HOST_PORT_PATTERN).describe('host:port of its consensus endpoint.'),
          organization: z.string().max(256).optional(),
        }),
      )
      .max(100)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['publicKey'] })
      .describe('Validators run by other organizations.'),
    genesis: z
      .object({
        chainId: z
          .string()
          .min(1)
          .max(128)
          .optional()
          .describe('Chain id of a new chain; <namespace>.<name> when absent.'),
        time: z.string().max(64).optional().describe('RFC 3339 genesis time; now when absent.'),
        from: z
          .object({
            configMapRef: z
              .object({
                name: z.string().min(1).max(253),
                namespace: z.string().max(63).optional().describe("The ConfigMap's namespace; this one when absent."),
                key: z.string().min(1).max(253).default('genesis.json'),
              })
              .optional()
              .describe("A ConfigMap holding the chain's genesis file (another LedgerCluster's <name>-genesis)."),
            url: z
              .string()
              .max(2048)
              .regex(/^https?:\/\/[^\s@]+$/, 'an http(s) URL without credentials')
              .optional()
              .describe("Where the chain's genesis file is published."),
            hash: z
              .string()
              .regex(/^[0-9a-f]{64}$/)
              .optional()
              .describe('The hash of its block 0: the chain this cluster joins is exactly this one.'),
          })
          .meta({
            'x-kubernetes-validations': [
              {
                rule: 'has(self.configMapRef) != has(self.url)',
                message: 'genesis.from names either configMapRef or url',
              },
            ],
          })
          .optional()
          .describe(
            "Join a chain another organization created: its published genesis file. This cluster's validators start as followers and join through membership.",
          ),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: '!has(self.from) || (!has(self.chainId) && !has(self.time))',
            message: 'genesis.from takes the chain id and time from the published genesis: set neither',
          },
        ],
      })
      .optional()
      .describe('Genesis parameters, or the chain to join (from); immutable once set.'),
    clusterTokenSecretRef: secretKeyRef
      .optional()
      .describe(
        "The peer token of the chain, when other organizations' validators share it (a copy of the creating cluster's <name>-token Secret); generated when absent.",
      ),
    brokers: z
      .object({
        primary: brokerEndpoint,
        federated: z
          .array(brokerEndpoint)
          .max(32)
          .default([])
          .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
        api: z.enum(['ngsi-v2', 'ngsi-ld']).default('ngsi-v2').describe('API every broker is read through.'),
        tenant: z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,50}$/)
          .optional()
          .describe('Fiware-Service header (NGSI-v2) or NGSILD-Tenant (NGSI-LD).'),
        servicePath: z
          .string()
          .max(1024)
          .regex(/^\/[A-Za-z0-9_/#,]*$/)
          .optional()
          .describe('Fiware-ServicePath header (NGSI-v2 only), e.g. /city or /city/#.'),
        caSecretRef: secretKeyRef.optional().describe("CA bundle (PEM) that signs the brokers' certificates."),
        authTokenSecretRef: secretKeyRef.optional().describe('X-Auth-Token for brokers behind a PEP proxy.'),
        pollIntervalSeconds: z.int().min(1).max(86400).default(10).describe('Time between comparison passes.'),
        mode: z
          .enum(['poll', 'subscribe'])
          .default('poll')
          .describe(
            "poll: read every broker completely each poll interval. subscribe: each validator subscribes to every broker (which must reach the validators' Services) and judges notified entities at once, and sweeps every sweep interval.",
          ),
        sweepIntervalSeconds: z
          .int()
          .min(1)
          .max(86400)
          .default(600)
          .describe("subscribe mode: time between one validator's sweeps (the validators take turns)."),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: "self.api == 'ngsi-v2' || !has(self.servicePath)",
            message: 'brokers.servicePath is for NGSI-v2 only (NGSI-LD has tenants, not service paths)',
          },
        ],
      })
      .optional()
      .describe('Context brokers the validators watch: the primary, and the federated brokers compared with it.'),
    ingress: z
      .object({
        host: z.string().min(1).max(253),
        className: z.string().max(253).optional(),
        tlsSecretName: z.string().max(253).optional().describe('Secret with the TLS certificate of the host.'),
        annotations: z
          .record(z.string(), z.string())
          .optional()
          .describe(
            'Annotations for the ingress controller; with tls.mode server or mutual the nodes speak HTTPS, which the controller must be told (ingress-nginx: nginx.ingress.kubernetes.io/backend-protocol: HTTPS).',
          ),
      })
      .optional()
      .describe(
        'Expose the open read endpoints and the /ui console through an Ingress: an explicit path allow-list (/health, /chain, /blocks, /proof, /evidence, /checkpoint and its proofs and witnesses, /ui); peer, membership and admin routes are never routed.',
      ),
    consensus: z
      .object({
        blockIntervalMs: z
          .int()
          .min(0)
          .max(60_000)
          .default(0)
          .describe('Wait before proposing a block when records are pending (batching; 0 = at once).'),
        emptyBlockIntervalMs: z
          .int()
          .min(0)
          .max(86_400_000)
          .default(60_000)
          .describe('An idle chain proposes an empty block this long after the last one; 0 = never.'),
        roundTimeoutBaseMs: z.int().min(10).max(600_000).default(2000),
        maxRecordsPerBlock: z.int().min(1).max(100_000).default(1000),
      })
      .default({
        blockIntervalMs: 0,
        emptyBlockIntervalMs: 60_000,
        roundTimeoutBaseMs: 2000,
        maxRecordsPerBlock: 1000,
      }),
    storage: z
      .object({ size: quantity.default('1Gi'), storageClassName: z.string().max(253).optional() })
      .default({ size: '1Gi' }),
    diagnostics: z
      .object({
        stallAfterSeconds: z
          .int()
          .min(1)
          .max(86_400)
          .default(60)
          .describe(
            'No block finalized for this long while records or a membership change are pending: Progressing=False, reason Stalled.',
          ),
        roundChangeStormRound: z
          .int()
          .min(1)
          .max(64)
          .default(4)
          .describe(
            'A validator at this round or higher at its open height: condition RoundChangeStorm=True (round timeouts grow as base × 2^round).',
          ),
      })
      .default({ stallAfterSeconds: 60, roundChangeStormRound: 4 })
      .describe('When the operator reports a stalled chain and a round-change storm.'),
    notifications: z
      .array(
        z.object({
          name: z.string().min(1).max(63),
          url: z
            .string()
            .min(1)
            .max(2048)
            .regex(
              /^(https?:\/\/|udp:\/\/|tcp:\/\/)\S+$/,
              'an http(s) webhook URL, or udp://host:port / tcp://host:port (syslog)',
            )
            .describe('Webhook URL, or a syslog target udp://host:port or tcp://host:port (RFC 5424).'),
          events: z
            .array(z.enum(NOTIFICATION_EVENTS))
            .max(8)
            .optional()
            .describe('Event types sent to this sink; all when absent. tamper: TAMPERED records, after finality.'),
          secretRef: secretKeyRef.optional().describe('Signing secret of the notification (webhooks: HMAC-SHA256).'),
        }),
      )
      .max(16)
      .default([])
      .meta({
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        'x-kubernetes-validations': [
          {
            rule: "self.filter(n, n.url.startsWith('udp://') || n.url.startsWith('tcp://')).size() <= 1",
            message: 'at most one syslog sink (udp:// or tcp://)',
          },
          {
            rule: 'self.all(a, !has(a.secretRef) || self.all(b, !has(b.secretRef) || (b.secretRef.name == a.secretRef.name && b.secretRef.key == a.secretRef.key)))',
            message: 'every webhook signs with the same secretRef (the validators hold one signing key)',
          },
        ],
      })
      .describe('Notification sinks.'),
    backup: objectStore
      .extend({
        schedule: cronSchedule.default('0 * * * *').describe('When the backup Job runs (CronJob schedule).'),
        maxAgeSeconds: z
          .int()
          .min(60)
          .max(31 * 86_400)
          .default(7200)
          .describe('The last successful backup older than this: condition BackupBehind=True.'),
        verify: z
          .object({ schedule: cronSchedule.describe('When the restore drill runs (CronJob schedule).') })
          .optional()
          .describe(
            'Restore drills: a Job restores the latest backup into scratch, verifies the whole chain and compares its tip with the live chain (condition BackupVerified).',
          ),
      })
      .optional()
      .describe(
        'Backups of the finalized chain to S3-compatible object storage: incremental segments and a manifest, by a CronJob that reads a node like any client (never blocks consensus).',
      ),
    bootstrap: z
      .object({
        fromBackup: objectStore
          .extend({
            identitySecretRef: secretRef.describe(
              "The chain's identity: genesis.json and the validators' key files v0.json, v1.json, … (kubectl scriptorium keys export).",
            ),
          })
          .describe(
            'Start the validators from a backup: every block verified from genesis before a node starts; a backup that does not verify is refused.',
          ),
      })
      .optional()
      .describe('How a new cluster starts (immutable).'),
    tls: z
      .object({
        mode: z.enum(['disabled', 'server', 'mutual']).default('server'),
        caSecretRef: secretRef.optional().describe('Operator-managed cluster CA (tls.crt, tls.key).'),
        trustedCaSecretRef: secretKeyRef
          .optional()
          .describe(
            "A PEM bundle of other organizations' CAs the validators also trust for peer TLS (each side trusts the other's).",
          ),
        issuerRef: z
          .object({
            name: z.string().min(1).max(253),
            kind: z.enum(['Issuer', 'ClusterIssuer']).default('Issuer'),
            group: z.string().max(253).default('cert-manager.io'),
          })
          .optional()
          .describe('cert-manager issuer that signs the validator certificates.'),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: "self.mode != 'mutual' || has(self.caSecretRef) || has(self.issuerRef)",
            message: 'tls.mode mutual requires tls.caSecretRef or tls.issuerRef',
          },
          {
            rule: '!(has(self.caSecretRef) && has(self.issuerRef))',
            message: 'set either tls.caSecretRef or tls.issuerRef, not both',
          },
        ],
      })
      .default({ mode: 'server' }),
    witnesses: z
      .array(witness)
      .max(32)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe(
        "Witnesses (C2SP tlog-witness) the validators submit each checkpoint to, and whose cosignatures readers' policies require.",
      ),
    witnessPolicy: z
      .object({
        threshold: z
          .int()
          .min(1)
          .max(32)
          .optional()
          .describe('How many witnesses must cosign a checkpoint; all when absent.'),
        unwitnessedAfterSeconds: z
          .int()
          .min(1)
          .max(86_400)
          .default(120)
          .describe('A block not covered by a checkpoint the policy is met by for this long: Witnessed=False.'),
      })
      .default({ unwitnessedAfterSeconds: 120 }),
    checkpoints: z
      .object({
        origin: z
          .string()
          .regex(ORIGIN_PATTERN, 'printable ASCII without spaces or +, not starting with {')
          .optional()
          .describe('Origin line of the checkpoints; scriptorium.dev/ledger/<chain id> when absent.'),
        intervalMs: z
          .int()
          .min(100)
          .max(3_600_000)
          .default(1000)
          .describe('A new checkpoint at most this often (and at every validator-set change).'),
      })
      .default({ intervalMs: 1000 }),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.validators >= 1', message: 'validators must be at least 1' },
      {
        rule: '!has(oldSelf.genesis) || (has(self.genesis) && self.genesis == oldSelf.genesis)',
        message: 'genesis is immutable once set',
      },
      {
        rule: 'has(oldSelf.bootstrap) == has(self.bootstrap) && (!has(self.bootstrap) || self.bootstrap == oldSelf.bootstrap)',
        message: 'bootstrap is immutable',
      },
      {
        rule: '!has(self.bootstrap) || !has(self.genesis)',
        message: 'set either genesis or bootstrap.fromBackup (the backup brings its own genesis), not both',
      },
      {
        rule: '!has(self.witnessPolicy) || !has(self.witnessPolicy.threshold) || (has(self.witnesses) && self.witnessPolicy.threshold <= size(self.witnesses))',
        message: 'witnessPolicy.threshold is at most the number of witnesses',
      },
    ],
  });

export const ledgerClusterStatus = z.object({
  observedGeneration: z.int().nonnegative().optional(),
  conditions: conditions.optional(),
  validators: z.int().nonnegative().optional().describe('Validators running (scale subresource).'),
  selector: z.string().optional().describe('Label selector of the validator pods (scale subresource).'),
  height: z.int().nonnegative().optional(),
  lastHeightChange: z.string().optional().describe('When the operator first saw the current height (RFC 3339).'),
  round: z.int().nonnegative().optional().describe('Highest round a validator is in at its open height.'),
  pendingRecords: z.int().nonnegative().optional().describe('Records waiting in the fullest mempool.'),
  activeValidators: z.int().nonnegative().optional(),
  quorum: z.int().nonnegative().optional(),
  members: z
    .array(
      z.object({
        name: z.string(),
        role: z.enum(['validator', 'follower']),
        height: z.int().nonnegative().optional(),
      }),
    )
    .optional(),
  witnessedSize: z
    .int()
    .nonnegative()
    .optional()
    .describe("Blocks covered by the latest checkpoint cosigned by the policy's threshold of witnesses."),
  unwitnessedSince: z
    .string()
    .optional()
    .describe('Finality time of the oldest block no such checkpoint covers (RFC 3339); absent when all are covered.'),
  witnesses: z
    .array(
      z.object({
        name: z.string(),
        cosignedSize: z.int().nonnegative().describe('Largest checkpoint size it cosigned (0: none seen).'),
        behind: z.int().nonnegative().describe('Blocks its latest cosigned checkpoint does not cover.'),
        cosignedAt: z.string().optional().describe("When it cosigned that checkpoint (its cosignature's time)."),
        lastError: z.string().optional().describe('Why the last submission to it failed, when it did.'),
      }),
    )
    .optional()
    .describe('Per witness, what it last cosigned and how far behind that is.'),
  pendingChange: z
    .object({
      kind: z.enum(['ADD', 'REMOVE']),
      validator: z.string().describe('Validator name (operator-run) or public key (external).'),
      since: z.string().optional().describe('When the change was submitted (RFC 3339).'),
      via: z.string().optional().describe('Validator the change was submitted through.'),
    })
    .optional()
    .describe('The membership change submitted and not finalized yet (one at a time).'),
  backup: z
    .object({
      lastHeight: z.int().nonnegative().optional().describe('Height of the last successful backup.'),
      lastTime: z.string().optional().describe('When it finished (RFC 3339).'),
      lastJob: z.string().optional().describe('The backup Job whose result is shown.'),
      lastError: z.string().optional().describe('Why the latest backup Job failed, when it did.'),
      verifiedHeight: z.int().nonnegative().optional().describe('Height the last drill verified.'),
      verifiedTime: z.string().optional(),
      verifyJob: z.string().optional().describe('The drill Job whose result is shown.'),
    })
    .optional()
    .describe('Backups and restore drills.'),
  keyRotation: z
    .object({
      request: z.string().describe('The rotate-key annotation value being served.'),
      validator: z.string().optional().describe('The validator being rotated now.'),
      step: z
        .enum(['NewKey', 'Restart', 'Add', 'Remove', 'Done'])
        .describe(
          'NewKey: new key Secret; Restart: the pod restarts with the new key and catches up; Add: ADD of the new key submitted; Remove: REMOVE of the old key submitted.',
        ),
      oldKey: z.string().optional(),
      newKey: z.string().optional(),
      since: z.string().optional().describe('When the current step began (RFC 3339).'),
      completed: z.array(z.string()).optional().describe('Validators of this request already rotated.'),
      refused: z.string().optional().describe('Why the request was refused (nothing was changed).'),
    })
    .optional()
    .describe('Validator key rotation, one validator at a time (survives an operator restart: this is its state).'),
  paused: z.boolean().optional().describe('True while scriptorium.dev/reconcile: paused stops the operator.'),
});

export type LedgerClusterSpecInput = z.input<typeof ledgerClusterSpec>;
export type LedgerClusterSpec = z.output<typeof ledgerClusterSpec>;
export type LedgerClusterStatus = z.infer<typeof ledgerClusterStatus>;

export interface LedgerCluster {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: LedgerClusterSpecInput;
  status?: LedgerClusterStatus;
}
