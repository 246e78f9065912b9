import type { TranslationService, TranslationServiceSpec } from '../../api/index.ts';
import { hashOf } from '../../kube/diff.ts';
import type { KubeObject } from '../../kube/types.ts';
import { migrateEnv } from './env.ts';
import { childMeta, containerSecurityContext, labels, names, podSecurityContext, REVISION_ANNOTATION } from './meta.ts';

function migrationPodSpec(ts: TranslationService, spec: TranslationServiceSpec) {
  return {
    restartPolicy: 'Never',
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    securityContext: podSecurityContext,
    containers: [
      {
        name: 'migrate',
        image: spec.image,
        ...(spec.imagePullPolicy ? { imagePullPolicy: spec.imagePullPolicy } : {}),
        args: ['migrate'],
        env: migrateEnv(ts, spec),
        resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
        securityContext: containerSecurityContext,
        volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
      },
    ],
    volumes: [{ name: 'tmp', emptyDir: {} }],
  };
}

/**
 * The rollout revision: a hash of the image and of the migration pod (its env comes from the spec).
 * A new revision means a new migration Job, which must succeed before the Deployment moves to it.
 */
export function revisionOf(ts: TranslationService, spec: TranslationServiceSpec): string {
  return hashOf({ image: spec.image, pod: migrationPodSpec(ts, spec) }, 10);
}

/** The migration Job of the current revision (Jobs are immutable: a new revision gets a new name). */
export function migrationJob(ts: TranslationService, spec: TranslationServiceSpec): KubeObject {
  const revision = revisionOf(ts, spec);
  const meta = childMeta(ts, names(ts).migrationJob(revision), 'migration');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { ...meta, annotations: { [REVISION_ANNOTATION]: revision } },
    spec: {
      backoffLimit: 3,
      activeDeadlineSeconds: 1800,
      template: {
        metadata: { labels: labels(ts, 'migration'), annotations: { [REVISION_ANNOTATION]: revision } },
        spec: migrationPodSpec(ts, spec),
      },
    },
  };
}

export type JobState = 'succeeded' | 'failed' | 'running';

/** Reads a Job's outcome from its status. */
export function jobState(job: KubeObject | undefined): JobState {
  const conditions: Array<{ type: string; status: string }> = job?.status?.conditions ?? [];
  if (conditions.some((c) => (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') && c.status === 'True')) {
    return 'succeeded';
  }
  if (conditions.some((c) => (c.type === 'Failed' || c.type === 'FailureTarget') && c.status === 'True'))
    return 'failed';
  return 'running';
}
