import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { secretMounts, serveEnv } from './env.ts';
import {
  childMeta,
  containerSecurityContext,
  labels,
  names,
  podSecurityContext,
  REVISION_ANNOTATION,
  selectorLabels,
} from './meta.ts';

export const DEFAULT_REPLICAS = 2;
export const DEFAULT_RESOURCES = { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } };
/** Seconds a stopping API pod goes on serving before SIGTERM (the preStop sleep), and its whole grace period. */
export const PRE_STOP_SLEEP_SECONDS = 10;
export const TERMINATION_GRACE_SECONDS = 30;

/**
 * The API Deployment at `revision`. With autoscaling the replica count is left to the HPA (the field is
 * not set, so the operator never fights the autoscaler over it).
 */
export function deployment(ts: TranslationService, spec: TranslationServiceSpec, revision: string): KubeObject {
  const selector = selectorLabels(ts);
  const secrets = secretMounts(ts, spec);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMeta(ts, names(ts).deployment, 'api'),
    spec: {
      ...(spec.autoscaling ? {} : { replicas: spec.replicas ?? DEFAULT_REPLICAS }),
      revisionHistoryLimit: 5,
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels: labels(ts, 'api'), annotations: { [REVISION_ANNOTATION]: revision } },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: podSecurityContext,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          containers: [
            {
              name: 'translation',
              image: spec.image,
              ...(spec.imagePullPolicy ? { imagePullPolicy: spec.imagePullPolicy } : {}),
              args: ['serve'],
              ports: [{ name: 'http', containerPort: 3000, protocol: 'TCP' }],
              env: serveEnv(ts, spec),
              resources: spec.resources ?? DEFAULT_RESOURCES,
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                periodSeconds: 10,
                timeoutSeconds: 2,
                failureThreshold: 3,
              },
              readinessProbe: {
                httpGet: { path: '/readyz', port: 'http' },
                periodSeconds: 5,
                timeoutSeconds: 2,
                failureThreshold: 2,
              },
              startupProbe: {
                httpGet: { path: '/healthz', port: 'http' },
                periodSeconds: 2,
                failureThreshold: 30,
              },
              // Keep serving while the pod leaves the Service's endpoints and every ingress controller and
              // kube-proxy has seen it go; only then SIGTERM (which stops accepting connections). Without it a
              // rollout answers 502 through an Ingress for the requests routed to a pod that has just stopped.
              lifecycle: { preStop: { sleep: { seconds: PRE_STOP_SLEEP_SECONDS } } },
              securityContext: containerSecurityContext,
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }, ...secrets.volumeMounts],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }, ...secrets.volumes],
        },
      },
    },
  };
}

export interface RolloutState {
  complete: boolean;
  desired: number;
  available: number;
  updated: number;
  message: string;
}

/** Whether the Deployment's current spec is fully rolled out and available (from its status). */
export function rolloutState(dep: KubeObject | undefined): RolloutState {
  if (!dep) return { complete: false, desired: 0, available: 0, updated: 0, message: 'Deployment not created yet' };
  const desired: number = dep.spec?.replicas ?? 1;
  const s = dep.status ?? {};
  const available: number = s.availableReplicas ?? 0;
  const updated: number = s.updatedReplicas ?? 0;
  const total: number = s.replicas ?? 0;
  const observed = (s.observedGeneration ?? 0) >= (dep.metadata.generation ?? 0);
  const complete = observed && updated >= desired && available >= desired && total <= updated;
  const message = !observed
    ? 'Deployment spec not observed yet'
    : `${available}/${desired} replicas available, ${updated} updated`;
  return { complete, desired, available, updated, message };
}
