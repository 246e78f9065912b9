import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, names, selectorLabels } from './meta.ts';

export function service(ts: TranslationService): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(ts, names(ts).service, 'api'),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(ts),
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

/** The Ingress, or null (which deletes one the operator made before). */
export function ingress(ts: TranslationService, spec: TranslationServiceSpec): KubeObject | null {
  if (!spec.ingress) return null;
  const { host, className, tlsSecretName, annotations } = spec.ingress;
  const meta = childMeta(ts, names(ts).ingress, 'api');
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: annotations ? { ...meta, annotations } : meta,
    spec: {
      ...(className ? { ingressClassName: className } : {}),
      ...(tlsSecretName ? { tls: [{ hosts: [host], secretName: tlsSecretName }] } : {}),
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: names(ts).service, port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** The HorizontalPodAutoscaler, or null when a fixed replica count is set. */
export function hpa(ts: TranslationService, spec: TranslationServiceSpec): KubeObject | null {
  if (!spec.autoscaling) return null;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMeta(ts, names(ts).hpa, 'api'),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: names(ts).deployment },
      minReplicas: spec.autoscaling.minReplicas,
      maxReplicas: spec.autoscaling.maxReplicas,
      metrics: [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: spec.autoscaling.targetCPUUtilizationPercentage },
          },
        },
      ],
    },
  };
}

/** At most one API pod down at a time during voluntary disruptions (node drains). */
export function podDisruptionBudget(ts: TranslationService): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMeta(ts, names(ts).pdb, 'api'),
    spec: { maxUnavailable: 1, selector: { matchLabels: selectorLabels(ts) } },
  };
}
