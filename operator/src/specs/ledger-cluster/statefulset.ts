import { MAX_RECORDS_PER_BLOCK, type NodeEnvVar } from '@scriptorium/ledger-protocol';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { restoreInitContainer } from './backup.ts';
import { GENESIS_FILE } from './genesis.ts';
import {
  childMeta,
  clusterNames,
  containerSecurityContext,
  labels,
  PATHS,
  podSecurityContext,
  validatorNames,
  validatorPodSelector,
} from './meta.ts';
import { NODE_PORT, PEERS_KEY, PORT_NAME, validatorAddress } from './network.ts';
import { KEY_FILE, TOKEN_FILE } from './secrets.ts';
import { watchEnv, watchVolumes } from './watch.ts';

export const DEFAULT_RESOURCES = { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } };

export { PATHS };

/**
 * The container environment, per the image's operator contract (services/ledger-node/README.md). Every name is
 * one the node's settings schema defines (`NodeEnvVar`): a misspelt or unknown variable does not type-check.
 */
export function validatorEnv(lc: LedgerCluster, spec: LedgerClusterSpec, validator: string): NodeEnvVar[] {
  const env: NodeEnvVar[] = [
    { name: 'NODE_ID', value: validator },
    { name: 'NODE_CONSENSUS__BIND_HOST', value: '0.0.0.0' },
    { name: 'NODE_CONSENSUS__BIND_PORT', value: String(NODE_PORT) },
    { name: 'NODE_CONSENSUS__ADVERTISE', value: validatorAddress(lc, validator) },
    { name: 'NODE_CONSENSUS__ROUND_TIMEOUT_MS', value: String(spec.consensus.roundTimeoutBaseMs) },
    {
      name: 'NODE_CONSENSUS__MAX_BLOCK_RECORDS',
      value: String(Math.min(spec.consensus.maxRecordsPerBlock, MAX_RECORDS_PER_BLOCK)),
    },
    { name: 'NODE_KEY_FILE', value: `${PATHS.keyDir}/${KEY_FILE}` },
    { name: 'NODE_GENESIS_FILE', value: `${PATHS.genesisDir}/${GENESIS_FILE}` },
    { name: 'NODE_DATA_DIR', value: PATHS.dataDir },
    { name: 'NODE_CLUSTER_TOKEN_FILE', value: `${PATHS.tokenDir}/${TOKEN_FILE}` },
    {
      name: 'NODE_PEERS',
      valueFrom: { configMapKeyRef: { name: clusterNames(lc).peersConfigMap, key: PEERS_KEY } },
    },
  ];
  if (spec.tls.mode !== 'disabled') {
    env.push(
      { name: 'NODE_TLS__ENABLED', value: 'true' },
      { name: 'NODE_TLS__MODE', value: spec.tls.mode },
      { name: 'NODE_TLS__CERT_FILE', value: `${PATHS.tlsDir}/tls.crt` },
      { name: 'NODE_TLS__KEY_FILE', value: `${PATHS.tlsDir}/tls.key` },
      { name: 'NODE_TLS__CA_FILE', value: `${PATHS.tlsDir}/ca.crt` },
    );
    if (spec.tls.trustedCaSecretRef)
      env.push({ name: 'NODE_TLS__EXTRA_CA_FILE', value: `${PATHS.trustedCaDir}/${TRUSTED_CA_FILE}` });
  }
  env.push(...checkpointEnv(spec));
  env.push(...watchEnv(spec));
  return env;
}

/** The file name of the trusted CA bundle in its mount. */
const TRUSTED_CA_FILE = 'ca.pem';

/** Checkpoints and witnesses: the interval, the origin when set, the witnesses and their threshold. */
export function checkpointEnv(spec: LedgerClusterSpec): NodeEnvVar[] {
  const env: NodeEnvVar[] = [{ name: 'NODE_CHECKPOINT__INTERVAL_MS', value: String(spec.checkpoints.intervalMs) }];
  if (spec.checkpoints.origin) env.push({ name: 'NODE_CHECKPOINT__ORIGIN', value: spec.checkpoints.origin });
  if (spec.witnesses.length > 0) {
    env.push({
      name: 'NODE_WITNESS__WITNESSES',
      value: JSON.stringify(spec.witnesses.map((w) => ({ name: w.name, url: w.url, key: w.key }))),
    });
    if (spec.witnessPolicy.threshold !== undefined)
      env.push({ name: 'NODE_WITNESS__THRESHOLD', value: String(spec.witnessPolicy.threshold) });
  }
  return env;
}

/**
 * One validator's StatefulSet: one replica, its own volume from `spec.storage`, so any single validator can be
 * retired or replaced. The PVC goes with the StatefulSet when it is deleted (retention policy `Delete`).
 */
export function validatorStatefulSet(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validator: string,
  tlsSecretName: string = validatorNames(validator).tlsSecret,
  keySecretName: string = validatorNames(validator).keySecret,
): KubeObject {
  const n = validatorNames(validator);
  const tls = spec.tls.mode !== 'disabled';
  const scheme = tls ? 'HTTPS' : 'HTTP';
  const secretMode = 0o440; // readable by the node user through fsGroup, by nobody else
  const volumes: object[] = [
    { name: 'key', secret: { secretName: keySecretName, defaultMode: secretMode } },
    { name: 'genesis', configMap: { name: clusterNames(lc).genesisConfigMap } },
    { name: 'token', secret: tokenVolume(lc, spec, secretMode) },
    { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
  ];
  const mounts: object[] = [
    { name: 'key', mountPath: PATHS.keyDir, readOnly: true },
    { name: 'genesis', mountPath: PATHS.genesisDir, readOnly: true },
    { name: 'token', mountPath: PATHS.tokenDir, readOnly: true },
    { name: 'data', mountPath: PATHS.dataDir },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  if (tls) {
    volumes.push({ name: 'tls', secret: { secretName: tlsSecretName, defaultMode: secretMode } });
    mounts.push({ name: 'tls', mountPath: PATHS.tlsDir, readOnly: true });
    const trusted = spec.tls.trustedCaSecretRef;
    if (trusted) {
      volumes.push({
        name: 'trusted-ca',
        secret: {
          secretName: trusted.name,
          items: [{ key: trusted.key, path: TRUSTED_CA_FILE }],
          defaultMode: secretMode,
        },
      });
      mounts.push({ name: 'trusted-ca', mountPath: PATHS.trustedCaDir, readOnly: true });
    }
  }
  const watch = watchVolumes(spec);
  volumes.push(...watch.volumes);
  mounts.push(...watch.mounts);
  const restore = restoreInitContainer(lc, spec);
  if (restore) volumes.push(...restore.volumes);
  const storage = spec.storage;
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: childMeta(lc, n.statefulSet, 'validator', validator),
    spec: {
      replicas: 1,
      serviceName: n.service,
      podManagementPolicy: 'Parallel',
      revisionHistoryLimit: 3,
      selector: { matchLabels: validatorPodSelector(lc, validator) },
      updateStrategy: { type: 'RollingUpdate' },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
      template: {
        metadata: { labels: labels(lc, 'validator', validator) },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: podSecurityContext,
          terminationGracePeriodSeconds: 15,
          ...(restore ? { initContainers: [restore.container] } : {}),
          containers: [
            {
              name: 'ledger-node',
              image: spec.image,
              imagePullPolicy: 'IfNotPresent',
              args: ['start'],
              ports: [{ name: PORT_NAME, containerPort: NODE_PORT, protocol: 'TCP' }],
              env: validatorEnv(lc, spec, validator),
              resources: spec.resources ?? DEFAULT_RESOURCES,
              startupProbe: {
                httpGet: { path: '/health', port: PORT_NAME, scheme },
                periodSeconds: 2,
                failureThreshold: 60,
              },
              livenessProbe: {
                httpGet: { path: '/health', port: PORT_NAME, scheme },
                periodSeconds: 10,
                timeoutSeconds: 3,
                failureThreshold: 3,
              },
              readinessProbe: {
                httpGet: { path: '/ready', port: PORT_NAME, scheme },
                periodSeconds: 5,
                timeoutSeconds: 3,
                failureThreshold: 2,
              },
              securityContext: containerSecurityContext,
              volumeMounts: mounts,
            },
          ],
          volumes,
        },
      },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'data', labels: labels(lc, 'validator', validator) },
          spec: {
            accessModes: ['ReadWriteOnce'],
            ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
            resources: { requests: { storage: String(storage.size) } },
          },
        },
      ],
    },
  };
}

/** The token volume: the generated `<cluster>-token` Secret, or the shared one `clusterTokenSecretRef` names. */
function tokenVolume(lc: LedgerCluster, spec: LedgerClusterSpec, defaultMode: number): object {
  const ref = spec.clusterTokenSecretRef;
  return ref
    ? { secretName: ref.name, items: [{ key: ref.key, path: TOKEN_FILE }], defaultMode }
    : { secretName: clusterNames(lc).tokenSecret, defaultMode };
}

/** What the StatefulSet's status says of its one pod. */
export function statefulSetReady(sts: KubeObject | undefined): boolean {
  if (!sts) return false;
  const s = sts.status ?? {};
  return (s.observedGeneration ?? 0) >= (sts.metadata.generation ?? 0) && (s.readyReplicas ?? 0) >= 1;
}

/** The StatefulSet has observed its spec, rolled its pod to the current revision, and the pod is Ready. */
export function rolloutSettled(sts: KubeObject | undefined): boolean {
  if (!sts || !statefulSetReady(sts)) return false;
  const s = sts.status ?? {};
  return !s.updateRevision || s.updateRevision === s.currentRevision;
}

/**
 * Whether a changed StatefulSet may be updated now: one validator at a time, so a rollout (a new image, new
 * settings) never takes down a healthy validator while another one is unavailable. A validator that is itself
 * not Ready may always be updated (it is down anyway, and its fix must not wait on the others).
 * @example updateAllowed('v1', stsByName, new Set()) // false while v0 is still rolling
 */
export function updateAllowed(
  validator: string,
  statefulSets: ReadonlyMap<string, KubeObject | undefined>,
  updatingNow: ReadonlySet<string>,
): boolean {
  if (!statefulSetReady(statefulSets.get(validator))) return true;
  if (updatingNow.size > 0) return false;
  for (const [name, sts] of statefulSets) if (name !== validator && !rolloutSettled(sts)) return false;
  return true;
}
