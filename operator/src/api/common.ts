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
