// Backups of a LedgerCluster's chain, as pure builders: the backup CronJob (`ledger-node backup`), the restore
// drill CronJob (`ledger-node backup-verify`) and the restore init container of each validator
// (`ledger-node restore`, with `spec.bootstrap.fromBackup`). All run the cluster's own ledger-node image; the bucket's
// credentials and CA are mounted as files into these pods only (the operator never reads them), and every setting is
// a name of the image's backup settings contract (`BackupEnvVar`), so a misspelt variable does not type-check.
import type { BackupEnvVar } from '@scriptorium/ledger-protocol';
import type { LedgerCluster, LedgerClusterSpec, ObjectStore } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { GENESIS_FILE } from './genesis.ts';
import { childMeta, clusterNames, containerSecurityContext, labels, PATHS, podSecurityContext } from './meta.ts';
import { validatorUrl } from './network.ts';

export const BACKUP_PATHS = {
  credentialsDir: '/etc/ledger-node/backup-credentials',
  storeCaDir: '/etc/ledger-node/backup-ca',
  nodeCaDir: '/etc/ledger-node/node-ca',
  scratchDir: '/var/lib/ledger-node/scratch',
} as const;

/** The container's termination message: the commands' one-line JSON result, read by the operator. */
export const RESULT_FILE = '/dev/termination-log';

const SECRET_MODE = 0o440;

/** Names of the backup objects. */
export function backupNames(lc: LedgerCluster) {
  return { backupCronJob: `${lc.metadata.name}-backup`, verifyCronJob: `${lc.metadata.name}-backup-verify` };
}

/** The backup's key prefix: `spec.backup.prefix`, else `<namespace>/<name>`. */
export function backupPrefix(lc: LedgerCluster, store: Pick<ObjectStore, 'prefix'>): string {
  return store.prefix ?? `${lc.metadata.namespace ?? 'default'}/${lc.metadata.name}`;
}

interface PodParts {
  env: BackupEnvVar[];
  volumes: object[];
  mounts: object[];
}

/** The object store's settings, its credentials and CA as files. */
function storeParts(lc: LedgerCluster, store: ObjectStore): PodParts {
  const { accessKeyId, secretAccessKey } = store.credentials;
  const env: BackupEnvVar[] = [
    { name: 'BACKUP__ENDPOINT', value: store.endpoint.replace(/\/$/, '') },
    { name: 'BACKUP__BUCKET', value: store.bucket },
    { name: 'BACKUP__PREFIX', value: backupPrefix(lc, store) },
    { name: 'BACKUP__REGION', value: store.region },
    { name: 'BACKUP__ACCESS_KEY_ID_FILE', value: `${BACKUP_PATHS.credentialsDir}/access-key-id` },
    { name: 'BACKUP__SECRET_ACCESS_KEY_FILE', value: `${BACKUP_PATHS.credentialsDir}/secret-access-key` },
    { name: 'NODE_GENESIS_FILE', value: `${PATHS.genesisDir}/${GENESIS_FILE}` },
    { name: 'BACKUP__RESULT_FILE', value: RESULT_FILE },
  ];
  // One projected volume: both keys, whether they live in one Secret or two.
  const volumes: object[] = [
    {
      name: 'backup-credentials',
      projected: {
        defaultMode: SECRET_MODE,
        sources: [
          { secret: { name: accessKeyId.name, items: [{ key: accessKeyId.key, path: 'access-key-id' }] } },
          { secret: { name: secretAccessKey.name, items: [{ key: secretAccessKey.key, path: 'secret-access-key' }] } },
        ],
      },
    },
    { name: 'genesis', configMap: { name: clusterNames(lc).genesisConfigMap } },
  ];
  const mounts: object[] = [
    { name: 'backup-credentials', mountPath: BACKUP_PATHS.credentialsDir, readOnly: true },
    { name: 'genesis', mountPath: PATHS.genesisDir, readOnly: true },
  ];
  if (store.caSecretRef) {
    env.push({ name: 'BACKUP__CA_FILE', value: `${BACKUP_PATHS.storeCaDir}/ca.crt` });
    volumes.push({
      name: 'backup-ca',
      secret: {
        secretName: store.caSecretRef.name,
        items: [{ key: store.caSecretRef.key, path: 'ca.crt' }],
        defaultMode: SECRET_MODE,
      },
    });
    mounts.push({ name: 'backup-ca', mountPath: BACKUP_PATHS.storeCaDir, readOnly: true });
  }
  return { env, volumes, mounts };
}

/**
 * Where the backup Jobs read the chain: every desired validator's API (the command takes the highest that
 * answers), with the cluster CA's certificate only (never its key) when the nodes speak HTTPS.
 */
function nodeParts(lc: LedgerCluster, spec: LedgerClusterSpec, validators: readonly string[]): PodParts {
  const env: BackupEnvVar[] = [
    { name: 'BACKUP__NODE_URL', value: validators.map((v) => validatorUrl(lc, spec, v)).join(',') },
  ];
  if (spec.tls.mode === 'disabled') return { env, volumes: [], mounts: [] };
  env.push({ name: 'BACKUP__NODE_CA_FILE', value: `${BACKUP_PATHS.nodeCaDir}/ca.crt` });
  const caSecret = spec.tls.caSecretRef?.name ?? clusterNames(lc).caSecret;
  return {
    env,
    volumes: [
      {
        name: 'node-ca',
        secret: { secretName: caSecret, items: [{ key: 'tls.crt', path: 'ca.crt' }], defaultMode: SECRET_MODE },
      },
    ],
    mounts: [{ name: 'node-ca', mountPath: BACKUP_PATHS.nodeCaDir, readOnly: true }],
  };
}

function backupJobCronJob(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  which: 'backup' | 'backup-verify',
  name: string,
  schedule: string,
  validators: readonly string[],
): KubeObject {
  const store = storeParts(lc, spec.backup as ObjectStore);
  const node = nodeParts(lc, spec, validators);
  const env = [...store.env, ...node.env];
  const volumes = [...store.volumes, ...node.volumes, { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } }];
  const mounts = [...store.mounts, ...node.mounts, { name: 'tmp', mountPath: '/tmp' }];
  if (which === 'backup-verify') {
    // The drill restores the whole chain here (removed by the command, and with the pod).
    env.push({ name: 'BACKUP__SCRATCH_DIR', value: BACKUP_PATHS.scratchDir });
    volumes.push({ name: 'scratch', emptyDir: {} });
    mounts.push({ name: 'scratch', mountPath: BACKUP_PATHS.scratchDir });
  }
  const podLabels = labels(lc, which);
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: childMeta(lc, name, which),
    spec: {
      schedule,
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 300,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels: podLabels },
        spec: {
          backoffLimit: 2,
          activeDeadlineSeconds: 6 * 3600,
          template: {
            metadata: { labels: podLabels },
            spec: {
              restartPolicy: 'Never',
              automountServiceAccountToken: false,
              enableServiceLinks: false,
              securityContext: podSecurityContext,
              containers: [
                {
                  name: which,
                  image: spec.image,
                  imagePullPolicy: 'IfNotPresent',
                  args: [which],
                  env,
                  // A backup is one client of the read API: a small, capped share of a core.
                  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
                  terminationMessagePolicy: 'File',
                  securityContext: containerSecurityContext,
                  volumeMounts: mounts,
                },
              ],
              volumes,
            },
          },
        },
      },
    },
  };
}

/** The backup CronJob, or null without `spec.backup`. */
export function backupCronJob(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validators: readonly string[],
): KubeObject | null {
  if (!spec.backup) return null;
  return backupJobCronJob(lc, spec, 'backup', backupNames(lc).backupCronJob, spec.backup.schedule, validators);
}

/** The restore drill CronJob, or null without `spec.backup.verify`. */
export function verifyCronJob(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validators: readonly string[],
): KubeObject | null {
  if (!spec.backup?.verify) return null;
  return backupJobCronJob(
    lc,
    spec,
    'backup-verify',
    backupNames(lc).verifyCronJob,
    spec.backup.verify.schedule,
    validators,
  );
}

/**
 * The init container that restores a validator's data volume from `spec.bootstrap.fromBackup` before the node
 * starts (`ledger-node restore`: every block verified from genesis; a volume that already holds a chain is left
 * alone, so a restarted pod restores nothing). A backup that does not verify fails the container, with the height
 * and the reason as its termination message, and the node never starts from it.
 */
export function restoreInitContainer(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
): { container: object; volumes: object[] } | null {
  const from = spec.bootstrap?.fromBackup;
  if (!from) return null;
  const store = storeParts(lc, from);
  // The validator's own genesis volume is already in its pod.
  const volumes = store.volumes.filter((v) => (v as { name: string }).name !== 'genesis');
  return {
    container: {
      name: 'restore',
      image: spec.image,
      imagePullPolicy: 'IfNotPresent',
      args: ['restore'],
      env: [...store.env, { name: 'NODE_DATA_DIR', value: PATHS.dataDir } satisfies BackupEnvVar],
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
      terminationMessagePolicy: 'File',
      securityContext: containerSecurityContext,
      volumeMounts: [...store.mounts, { name: 'data', mountPath: PATHS.dataDir }, { name: 'tmp', mountPath: '/tmp' }],
    },
    volumes,
  };
}
