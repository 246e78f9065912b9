import { z } from 'zod';

/** Group and version of every Scriptorium custom resource. */
export const GROUP = 'scriptorium.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** A DNS-1123 label, as Kubernetes requires for most object names. */
export const dnsLabel = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);

/** A reference to one key of a Secret in the resource's namespace. */
export const secretKeyRef = z
  .object({
    name: z.string().min(1).max(253).describe('Name of the Secret, in the same namespace.'),
    key: z.string().min(1).max(253).describe('Key inside the Secret.'),
  })
  .describe('A key of a Secret in the same namespace.');

/** A reference to a whole Secret in the resource's namespace. */
export const secretRef = z
  .object({ name: z.string().min(1).max(253).describe('Name of the Secret, in the same namespace.') })
  .describe('A Secret in the same namespace.');

/**
 * A Kubernetes quantity ("500m", "256Mi", 2). Rendered in the CRD as `x-kubernetes-int-or-string`
 * (the generator replaces the union, which is not a structural schema).
 */
export const quantity = z
  .union([z.string().regex(/^[+-]?[0-9.]+([eE][+-]?[0-9]+|[a-zA-Z]{0,2})?$/), z.number().int().nonnegative()])
  .meta({ 'x-kubernetes-int-or-string': true });

export const resourceList = z.record(z.string(), quantity);

export const resources = z
  .object({
    requests: resourceList.optional(),
    limits: resourceList.optional(),
  })
  .describe('Compute resources of each container, as in a Pod spec.');

/** Condition types every Scriptorium kind reports. `Ready` is derived from the other two. */
export const CONDITION_TYPES = ['Ready', 'Progressing', 'Degraded'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export const condition = z.object({
  type: z.string().min(1).max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  reason: z.string().max(1024),
  message: z.string().max(32768),
  lastTransitionTime: z.string(),
  observedGeneration: z.int().nonnegative().optional(),
});
export type Condition = z.infer<typeof condition>;

export const conditions = z
  .array(condition)
  .max(16)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });

/** The object metadata fields the operator reads. The API server owns the rest. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

/**
 * `scriptorium.dev/reconcile: paused` on a custom resource: the operator changes nothing it owns until the
 * annotation is removed (status says so; a deletion still proceeds).
 */
export const RECONCILE_ANNOTATION = 'scriptorium.dev/reconcile';
export const PAUSED = 'paused';

/** True when the resource carries `scriptorium.dev/reconcile: paused`. */
export function isPaused(meta: Pick<ObjectMeta, 'annotations'>): boolean {
  return meta.annotations?.[RECONCILE_ANNOTATION] === PAUSED;
}

/** An S3-compatible bucket and where in it (backups of the ledger; the same shape CloudNativePG users know). */
export const objectStore = z.object({
  endpoint: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^https?:\/\/[^\s?#@/]+(:\d+)?\/?$/, 'an http(s) URL of the S3 endpoint (scheme, host, optional port)')
    .describe(
      'S3-compatible endpoint, e.g. https://s3.eu-west-1.amazonaws.com or https://minio.storage:9000 (path-style requests).',
    ),
  bucket: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name')
    .describe('Bucket (must exist).'),
  prefix: z
    .string()
    .max(512)
    .regex(/^[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*$/, 'path segments without leading or trailing /')
    .optional()
    .describe('Key prefix of this backup; default <namespace>/<name>.'),
  region: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .default('us-east-1')
    .describe('Signing region.'),
  credentials: z
    .object({
      accessKeyId: secretKeyRef.describe('Access key id.'),
      secretAccessKey: secretKeyRef.describe('Secret access key.'),
    })
    .describe('Keys of the bucket (mounted as files into the backup pods only, never read by the operator).'),
  caSecretRef: secretKeyRef.optional().describe("CA bundle (PEM) that signs the endpoint's certificate."),
});
export type ObjectStore = z.output<typeof objectStore>;
