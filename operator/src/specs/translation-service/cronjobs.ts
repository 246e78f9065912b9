import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { triggerEnv } from './env.ts';
import { childMeta, containerSecurityContext, labels, names, podSecurityContext } from './meta.ts';

function trigger(
  ts: TranslationService,
  spec: TranslationServiceSpec,
  which: 'worker' | 'retention',
  name: string,
  schedule: string,
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: childMeta(ts, name, which),
    spec: {
      schedule,
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 120,
      successfulJobsHistoryLimit: 1,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels: labels(ts, which) },
        spec: {
          backoffLimit: 1,
          activeDeadlineSeconds: 600,
          ttlSecondsAfterFinished: 3600,
          template: {
            metadata: { labels: labels(ts, which) },
            spec: {
              restartPolicy: 'Never',
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              securityContext: podSecurityContext,
              containers: [
                {
                  name: which,
                  image: spec.image,
                  ...(spec.imagePullPolicy ? { imagePullPolicy: spec.imagePullPolicy } : {}),
                  args: ['trigger', which],
                  env: triggerEnv(ts),
                  resources: { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '128Mi' } },
                  securityContext: containerSecurityContext,
                },
              ],
            },
          },
        },
      },
    },
  };
}

/** The worker CronJob (`trigger worker`: drains the job queue through the API). */
export function workerCronJob(ts: TranslationService, spec: TranslationServiceSpec): KubeObject {
  return trigger(ts, spec, 'worker', names(ts).workerCronJob, spec.schedules.worker);
}

/** The retention CronJob (`trigger retention`: enforces data retention through the API). */
export function retentionCronJob(ts: TranslationService, spec: TranslationServiceSpec): KubeObject {
  return trigger(ts, spec, 'retention', names(ts).retentionCronJob, spec.schedules.retention);
}
