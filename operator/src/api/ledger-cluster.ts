import { HOST_PORT_PATTERN } from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import { conditions, type ObjectMeta, quantity, secretKeyRef, secretRef } from './common.ts';

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

/** Notification URLs that are syslog targets rather than webhooks. */
export const SYSLOG_URL = /^(udp|tcp):\/\//;

export const ledgerClusterSpec = z
  .object({
    image: z.string().min(1).max(512).describe('Container image of the ledger node.'),
    validators: z.int().max(100).describe('Number of validators the operator runs (scale subresource).'),
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
        chainId: z.string().min(1).max(128),
        time: z.string().max(64).optional().describe('RFC 3339 genesis time; now when absent.'),
      })
      .optional()
      .describe('Genesis parameters; immutable once set.'),
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
        'Expose the open read endpoints and the /ui console through an Ingress: an explicit path allow-list (/health, /chain, /blocks, /proof, /evidence, /ui); peer, membership and admin routes are never routed.',
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
    tls: z
      .object({
        mode: z.enum(['disabled', 'server', 'mutual']).default('server'),
        caSecretRef: secretRef.optional().describe('Operator-managed cluster CA (tls.crt, tls.key).'),
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
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.validators >= 1', message: 'validators must be at least 1' },
      {
        rule: '!has(oldSelf.genesis) || (has(self.genesis) && self.genesis == oldSelf.genesis)',
        message: 'genesis is immutable once set',
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
  pendingChange: z
    .object({
      kind: z.enum(['ADD', 'REMOVE']),
      validator: z.string().describe('Validator name (operator-run) or public key (external).'),
      since: z.string().optional().describe('When the change was submitted (RFC 3339).'),
      via: z.string().optional().describe('Validator the change was submitted through.'),
    })
    .optional()
    .describe('The membership change submitted and not finalized yet (one at a time).'),
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
