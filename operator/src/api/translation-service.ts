import { z } from 'zod';
import { conditions, type ObjectMeta, quantity, resources, secretKeyRef } from './common.ts';

export const TS_KIND = 'TranslationService';
export const TS_PLURAL = 'translationservices';

const cron = z
  .string()
  .min(9)
  .max(100)
  .regex(/^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(\S+\s+){4}\S+)$/)
  .describe('A CronJob schedule (five fields, or a @macro).');

export const autoscaling = z
  .object({
    minReplicas: z.int().min(1).max(1000).default(2).describe('Lower bound of the HorizontalPodAutoscaler.'),
    maxReplicas: z.int().min(1).max(1000).describe('Upper bound of the HorizontalPodAutoscaler.'),
    targetCPUUtilizationPercentage: z.int().min(1).max(100).default(75),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'self.minReplicas <= self.maxReplicas', message: 'autoscaling.minReplicas must not exceed maxReplicas' },
    ],
  })
  .describe('Run a HorizontalPodAutoscaler between these bounds instead of a fixed replica count.');

/**
 * TRUST_PROXY of the `serve` container: which proxies' X-Forwarded-For the service believes, so per-IP limits
 * see the caller. A string, as the image reads it: `true`, `false`, a hop count, or comma-separated
 * addresses/CIDRs (or proxy-addr names such as `loopback`, `uniquelocal`).
 */
export const trustProxy = z
  .string()
  .min(1)
  .max(1024)
  .regex(/^[0-9A-Za-z.:/]+( *, *[0-9A-Za-z.:/]+)*$/)
  .describe(
    "Proxies in front of the API the service trusts for the client address (TRUST_PROXY): 'true', 'false', " +
      "a hop count such as '2', or comma-separated addresses/CIDRs. Default with spec.ingress: '1' (the ingress " +
      'controller); without it, unset (the image trusts none).',
  );

const httpUrl = z
  .string()
  .max(2048)
  .regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, 'must be an http(s) URL');

export const providerSpec = z
  .object({
    kind: z.enum(['pseudo', 'openai', 'anthropic']).default('pseudo').describe('Upstream API family.'),
    baseUrl: z.string().max(2048).optional().describe('Base URL of the upstream (OpenAI-compatible or Anthropic).'),
    apiKeySecretRef: secretKeyRef.optional().describe('Secret key holding the provider API key.'),
    models: z
      .object({
        cheap: z.string().max(256).optional().describe('Model used for the cheap tier.'),
        top: z.string().max(256).optional().describe('Model used for the top tier.'),
      })
      .default({})
      .describe('Model per quality tier.'),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.kind == 'pseudo' || has(self.apiKeySecretRef)",
        message: 'provider.apiKeySecretRef is required when provider.kind is openai or anthropic',
      },
    ],
  });

export const plan = z.object({
  name: z.string().min(1).max(63).describe('Plan name, referenced by subscriptions.'),
  tokensPerPeriod: z.int().min(0).describe('Token quota per billing period.'),
  periodDays: z.int().min(1).max(366).default(30),
  dailyBudgetCents: z.int().min(0).describe('Daily spending cap, in cents, priced per model.'),
  externalPriceId: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('The payment provider price id that selects this plan (billing webhook).'),
});

export const rateLimit = z.object({
  route: z.string().min(1).max(256).describe('Route the limit applies to, e.g. /api/v1/translate.'),
  requestsPerMinute: z.int().min(1).max(1_000_000),
});

export const translationServiceSpec = z
  .object({
    image: z.string().min(1).max(512).describe('Container image of the translation service.'),
    imagePullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']).optional(),
    replicas: z.int().min(0).max(1000).optional().describe('Fixed replica count (when autoscaling is not set).'),
    autoscaling: autoscaling.optional(),
    database: z
      .object({
        secretRef: secretKeyRef
          .optional()
          .describe('Secret key holding the PostgreSQL connection string (CloudNativePG: uri).'),
        cnpg: z
          .object({
            instances: z
              .int()
              .min(1)
              .max(9)
              .default(2)
              .describe('PostgreSQL instances (1 primary, the rest replicas).'),
            storage: z
              .object({ size: quantity.default('1Gi'), storageClass: z.string().max(253).optional() })
              .default({ size: '1Gi' }),
            imageName: z
              .string()
              .min(1)
              .max(512)
              .optional()
              .describe("PostgreSQL operand image; default CloudNativePG's own."),
            resources: resources.optional(),
            parameters: z
              .record(z.string(), z.string())
              .optional()
              .describe('postgresql.conf parameters CloudNativePG allows.'),
          })
          .optional()
          .describe(
            'A managed PostgreSQL: the operator creates a CloudNativePG Cluster <name>-db (owned by this resource) and uses its <name>-db-app Secret (key uri).',
          ),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: 'has(self.secretRef) != has(self.cnpg)',
            message: 'set exactly one of database.secretRef and database.cnpg',
          },
        ],
      })
      .describe(
        'The PostgreSQL database: a connection string you bring, or a CloudNativePG cluster the operator runs.',
      ),
    provider: providerSpec.default({ kind: 'pseudo', models: {} }),
    plans: z
      .array(plan)
      .max(64)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .describe('Plans, quotas and budget caps.'),
    rateLimits: z
      .array(rateLimit)
      .max(64)
      .default([])
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['route'] }),
    oauth: z
      .object({
        clientId: z.string().min(1).max(256).describe('OAuth App client id (OAUTH__CLIENT_ID).'),
        clientSecretRef: secretKeyRef.describe(
          'Secret key holding the client secret (mounted: OAUTH__CLIENT_SECRET_FILE).',
        ),
        authorizeUrl: httpUrl.optional().describe('Authorize endpoint (OAUTH__AUTHORIZE_URL); default GitHub’s.'),
        tokenUrl: httpUrl.optional().describe('Access-token endpoint (OAUTH__TOKEN_URL); default GitHub’s.'),
        apiUrl: httpUrl
          .optional()
          .describe('REST API base serving /user and /user/emails (OAUTH__API_URL); default https://api.github.com.'),
      })
      .optional()
      .describe('GitHub sign-in: the OAuth client of the code-hosting identity provider. Without it, sign-in is off.'),
    billing: z
      .object({
        webhookSecretRef: secretKeyRef.describe(
          'Signing secret of the payment provider webhook (mounted: BILLING__WEBHOOK_SECRET_FILE).',
        ),
      })
      .optional(),
    publicUrl: httpUrl
      .optional()
      .describe(
        'The service’s external URL (PUBLIC_BASE_URL: OAuth callback, invite links, CSRF origin); default the Ingress ' +
          'host, else the in-cluster Service URL.',
      ),
    schedules: z
      .object({
        worker: cron.default('* * * * *'),
        retention: cron.default('17 3 * * *'),
      })
      .default({ worker: '* * * * *', retention: '17 3 * * *' })
      .describe('Schedules of the worker and retention CronJobs.'),
    ingress: z
      .object({
        host: z.string().min(1).max(253),
        className: z.string().max(253).optional(),
        tlsSecretName: z.string().max(253).optional().describe('Secret with the TLS certificate of the host.'),
        annotations: z.record(z.string(), z.string()).optional(),
      })
      .optional()
      .describe('Expose the service through an Ingress.'),
    trustProxy: trustProxy.optional(),
    resources: resources.optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '!(has(self.replicas) && has(self.autoscaling))',
        message: 'set either replicas or autoscaling, not both',
      },
    ],
  });

export const translationServiceStatus = z.object({
  observedGeneration: z.int().nonnegative().optional(),
  conditions: conditions.optional(),
  url: z.string().optional().describe('Where the API answers.'),
  replicas: z.int().nonnegative().optional(),
  readyReplicas: z.int().nonnegative().optional(),
  migration: z
    .object({ job: z.string(), revision: z.string(), succeeded: z.boolean() })
    .optional()
    .describe('The migration Job of the current revision.'),
  database: z
    .object({
      cluster: z.string().describe('The CloudNativePG Cluster.'),
      instances: z.int().nonnegative().optional(),
      readyInstances: z.int().nonnegative().optional(),
      phase: z.string().optional().describe("CloudNativePG's phase of the cluster."),
      primary: z.string().optional().describe('The current primary instance.'),
      ready: z.boolean(),
    })
    .optional()
    .describe('The managed database (spec.database.cnpg).'),
  paused: z.boolean().optional().describe('True while scriptorium.dev/reconcile: paused stops the operator.'),
});

export type TranslationServiceSpecInput = z.input<typeof translationServiceSpec>;
export type TranslationServiceSpec = z.output<typeof translationServiceSpec>;
export type TranslationServiceStatus = z.infer<typeof translationServiceStatus>;

export interface TranslationService {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: TranslationServiceSpecInput;
  status?: TranslationServiceStatus;
}
