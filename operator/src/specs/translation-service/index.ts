export { retentionCronJob, workerCronJob } from './cronjobs.ts';
export {
  CNPG_API_VERSION,
  CNPG_DATABASE,
  cnpgCluster,
  cnpgState,
  type DatabaseState,
  databaseSecretRef,
} from './database.ts';
export { DEFAULT_REPLICAS, deployment, type RolloutState, rolloutState } from './deployment.ts';
export {
  INGRESS_TRUST_PROXY,
  migrateEnv,
  publicUrl,
  referencedSecretKeys,
  serveEnv,
  serviceUrl,
  triggerEnv,
  trustProxyOf,
} from './env.ts';
export {
  COMPONENT_LABEL,
  childMeta,
  INSTANCE_LABEL,
  labels,
  MANAGED_BY,
  MANAGED_SELECTOR,
  names,
  ownerReference,
  REVISION_ANNOTATION,
  selectorLabels,
} from './meta.ts';
export { type JobState, jobState, migrationJob, revisionOf } from './migration-job.ts';
export { hpa, ingress, podDisruptionBudget, service } from './network.ts';
export { generatedSecrets, randomToken } from './secrets.ts';
