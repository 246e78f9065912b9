import { type TranslationService, type TranslationServiceSpec, translationServiceSpec } from '../../api/index.ts';
import { isNotFound, KubeApiError, OperatorError, SecretNotFoundError } from '../../errors.ts';
import { type ApplyContext, apply, createIfAbsent } from '../../kube/apply.ts';
import { RESOURCES, resourcePath } from '../../kube/resources.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';
import {
  COMPONENT_LABEL,
  cnpgCluster,
  cnpgState,
  type DatabaseState,
  deployment,
  generatedSecrets,
  hpa,
  INSTANCE_LABEL,
  ingress,
  jobState,
  migrationJob,
  names,
  podDisruptionBudget,
  publicUrl,
  REVISION_ANNOTATION,
  randomToken,
  referencedSecretKeys,
  retentionCronJob,
  rolloutState,
  service,
  workerCronJob,
} from '../../specs/translation-service/index.ts';
import {
  type Cond,
  type ReconcilerDeps,
  type ReconcileStats,
  reconcileInFrame,
  writeConditions,
} from '../reconcile-frame.ts';

export { FINALIZER } from '../reconcile-frame.ts';

export type { ReconcileStats };

export interface ReconcileDeps extends ReconcilerDeps {
  /** Generates the values of the operator's own Secrets (tests make them predictable). */
  token?: () => string;
}

const secretKeys = new Map<string, Set<string>>();

/** The first referenced Secret (or key) that does not exist, or undefined. Secret values are never kept. */
async function missingSecret(deps: ReconcileDeps, namespace: string, spec: TranslationServiceSpec) {
  for (const ref of referencedSecretKeys(spec)) {
    const meta = deps.lookup(RESOURCES.Secret, namespace, ref.name);
    if (!meta) return { ...ref, keyMissing: false };
    // Which keys a Secret has is remembered per resourceVersion (names only, never values).
    const memo = `${namespace}/${ref.name}@${meta.metadata.resourceVersion}`;
    let keys = secretKeys.get(memo);
    try {
      if (!keys) {
        const secret = await deps.client.request<KubeObject>(
          'GET',
          resourcePath(RESOURCES.Secret, namespace, ref.name),
        );
        keys = new Set(Object.keys(secret.data ?? {}));
        if (secretKeys.size > 5000) secretKeys.clear();
        secretKeys.set(`${namespace}/${ref.name}@${secret.metadata.resourceVersion}`, keys);
      }
      if (!keys.has(ref.key)) return { ...ref, keyMissing: true };
    } catch (err) {
      if (isNotFound(err)) return { ...ref, keyMissing: false };
      throw err;
    }
  }
  return undefined;
}

/** Deletion: stop the workloads (CronJobs first, then the Deployment); the garbage collector removes the rest. */
async function stopWorkloads(ts: KubeObject, ctx: ApplyContext): Promise<void> {
  const namespace = ts.metadata.namespace ?? '';
  const n = names(ts as TranslationService);
  await apply(ctx, RESOURCES.CronJob, namespace, n.workerCronJob, null);
  await apply(ctx, RESOURCES.CronJob, namespace, n.retentionCronJob, null);
  await apply(ctx, RESOURCES.Deployment, namespace, n.deployment, null);
}

/**
 * One reconcile of a TranslationService: compare and apply, in order. Desired objects come from the pure
 * builders in specs/translation-service; this function only decides the order and reports status.
 */
export function reconcileTranslationService(
  deps: ReconcileDeps,
  key: string,
): Promise<{ requeueAfterMs?: number } | undefined> {
  return reconcileInFrame(deps, key, {
    type: RESOURCES.TranslationService,
    schema: translationServiceSpec,
    specFields: (ts, spec) => ({ url: publicUrl(ts as TranslationService, spec) }),
    cleanUp: stopWorkloads,
    finalizedNote: 'Workloads stopped; remaining objects are removed by the garbage collector',
    reconcileSpec: (ts, spec, ctx) => reconcileSpec(deps, ts, spec, ctx),
  });
}

async function reconcileSpec(
  deps: ReconcileDeps,
  ts: KubeObject,
  spec: TranslationServiceSpec,
  ctx: ApplyContext,
): Promise<{ requeueAfterMs?: number } | undefined> {
  const namespace = ts.metadata.namespace ?? '';
  const resource = ts as TranslationService;
  const n = names(resource);

  for (const secret of generatedSecrets(resource, deps.token ?? randomToken)) {
    await createIfAbsent(ctx, RESOURCES.Secret, secret);
  }

  const missing = await missingSecret(deps, namespace, spec);
  if (missing) throw new SecretNotFoundError(missing.name, missing.keyMissing ? missing.key : undefined, missing.field);

  // A managed database first: nothing that needs it (the migration, the pods) starts before its primary serves.
  const database = spec.database.cnpg ? await ensureCnpg(ctx, resource, spec) : undefined;
  if (database && !database.state.ready) {
    await writeConditions(deps, RESOURCES.TranslationService, ts, {
      degraded: { status: 'False', reason: 'AsExpected', message: 'All objects applied' },
      progressing: {
        status: 'True',
        reason: 'DatabaseNotReady',
        message: `CloudNativePG cluster ${n.database}: ${database.state.readyInstances ?? 0}/${database.state.instances ?? spec.database.cnpg?.instances} instances ready${database.state.phase ? ` (${database.state.phase})` : ''}`,
      },
      fields: { url: publicUrl(resource, spec), database: databaseStatus(n.database, database.state) },
    });
    return { requeueAfterMs: DATABASE_POLL_MS };
  }

  await apply(ctx, RESOURCES.Service, namespace, n.service, service(resource));
  await apply(ctx, RESOURCES.PodDisruptionBudget, namespace, n.pdb, podDisruptionBudget(resource));
  await apply(ctx, RESOURCES.Ingress, namespace, n.ingress, ingress(resource, spec));
  await apply(ctx, RESOURCES.HorizontalPodAutoscaler, namespace, n.hpa, hpa(resource, spec));

  const job = migrationJob(resource, spec);
  const jobName = job.metadata.name ?? '';
  const revision = job.metadata.annotations?.[REVISION_ANNOTATION] ?? '';
  await apply(ctx, RESOURCES.Job, namespace, jobName, job);
  const migration = jobState(deps.lookup(RESOURCES.Job, namespace, jobName));
  const currentDeployment = deps.lookup(RESOURCES.Deployment, namespace, n.deployment);
  const deployedRevision = currentDeployment?.spec?.template?.metadata?.annotations?.[REVISION_ANNOTATION];

  // The Deployment moves to a revision only after that revision's migration succeeded.
  if (migration === 'succeeded' || deployedRevision === revision) {
    await apply(ctx, RESOURCES.Deployment, namespace, n.deployment, deployment(resource, spec, revision));
    await apply(ctx, RESOURCES.CronJob, namespace, n.workerCronJob, workerCronJob(resource, spec));
    await apply(ctx, RESOURCES.CronJob, namespace, n.retentionCronJob, retentionCronJob(resource, spec));
  }
  if (migration === 'succeeded') {
    for (const old of deps.list(RESOURCES.Job, namespace)) {
      const labels = old.metadata.labels ?? {};
      if (
        labels[INSTANCE_LABEL] === resource.metadata.name &&
        labels[COMPONENT_LABEL] === 'migration' &&
        old.metadata.name !== jobName &&
        controllerOf(old)?.uid === ts.metadata.uid
      ) {
        await apply(ctx, RESOURCES.Job, namespace, old.metadata.name ?? '', null);
      }
    }
  }

  const dep = deps.lookup(RESOURCES.Deployment, namespace, n.deployment);
  const rollout = rolloutState(dep);
  const atRevision = dep?.spec?.template?.metadata?.annotations?.[REVISION_ANNOTATION] === revision;
  let degraded: Cond = { status: 'False', reason: 'AsExpected', message: 'All objects applied' };
  let progressing: Cond;
  if (migration === 'failed') {
    const message = `Migration Job ${jobName} failed; the Deployment stays at its previous revision`;
    degraded = { status: 'True', reason: 'MigrationFailed', message };
    progressing = { status: 'False', reason: 'MigrationFailed', message };
    await deps.recorder.record(ts, {
      type: 'Warning',
      reason: 'MigrationFailed',
      action: 'Reconcile',
      note: message,
    });
  } else if (migration === 'running' && !atRevision) {
    progressing = {
      status: 'True',
      reason: 'MigrationRunning',
      message: `Migration Job ${jobName} runs before the rollout of revision ${revision}`,
    };
  } else if (!rollout.complete) {
    progressing = { status: 'True', reason: 'RollingOut', message: rollout.message };
  } else {
    progressing = { status: 'False', reason: 'RolloutComplete', message: rollout.message };
  }
  // A new generation is acknowledged at once; later progress (migration done, replicas) may fold into the next
  // reconcile's write when one is already queued.
  const acknowledged = ts.status?.observedGeneration === ts.metadata.generation;
  if (acknowledged && migration !== 'failed' && deps.deferStatus?.(`${namespace}/${ts.metadata.name}`)) {
    return undefined;
  }
  await writeConditions(deps, RESOURCES.TranslationService, ts, {
    degraded,
    progressing,
    fields: {
      url: publicUrl(resource, spec),
      replicas: dep?.status?.replicas ?? 0,
      readyReplicas: dep?.status?.availableReplicas ?? 0,
      migration: { job: jobName, revision, succeeded: migration === 'succeeded' },
      database: database ? databaseStatus(n.database, database.state) : undefined,
    },
  });
  // The database's readiness (a switchover, a lost instance) is read, not watched: look again.
  return database ? { requeueAfterMs: DATABASE_POLL_MS } : undefined;
}

/** How often a TranslationService with a CloudNativePG database reads the Cluster's status again. */
export const DATABASE_POLL_MS = 10_000;

function databaseStatus(cluster: string, state: DatabaseState) {
  return { cluster, ...state };
}

/**
 * Applies the CloudNativePG Cluster and reads its status (the Cluster is not watched: CloudNativePG may not be
 * installed, and an informer on a missing kind fails without end). A missing CRD is reported, and retried.
 */
async function ensureCnpg(
  ctx: ApplyContext,
  ts: TranslationService,
  spec: TranslationServiceSpec,
): Promise<{ state: DatabaseState }> {
  const namespace = ts.metadata.namespace ?? '';
  const name = names(ts).database;
  try {
    await apply(ctx, RESOURCES.CnpgCluster, namespace, name, cnpgCluster(ts, spec));
    const cluster = await ctx.client.request<KubeObject>('GET', resourcePath(RESOURCES.CnpgCluster, namespace, name));
    return { state: cnpgState(cluster) };
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404)
      throw new OperatorError(
        'CNPG_NOT_INSTALLED',
        'spec.database.cnpg needs CloudNativePG: the postgresql.cnpg.io/v1 Cluster kind is not served by this cluster',
      );
    throw err;
  }
}
