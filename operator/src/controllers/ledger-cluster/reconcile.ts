import { type LedgerCluster, type LedgerClusterSpec, ledgerClusterSpec } from '../../api/index.ts';
import { OperatorError, SpecRefusedError } from '../../errors.ts';
import { type ApplyContext, apply, createIfAbsent, decide } from '../../kube/apply.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';
import {
  backupCronJob,
  backupNames,
  checkPublishedGenesis,
  clientIngress,
  clientService,
  clusterNames,
  desiredValidators,
  externalNodeId,
  genesisConfigMap,
  genesisConfigMapOf,
  genesisValidators,
  joinedGenesisConfigMap,
  keyGeneration,
  keySecretName,
  keySecrets,
  PUBLIC_KEY_ANNOTATION,
  peersConfigMap,
  podDisruptionBudget,
  randomClusterToken,
  rolloutSettled,
  selectorString,
  statefulSetReady,
  tokenSecret,
  updateAllowed,
  VALIDATOR_LABEL,
  validatorIndex,
  validatorNames,
  validatorService,
  validatorStatefulSet,
  validatorUrl,
  verifyCronJob,
} from '../../specs/ledger-cluster/index.ts';
import { reconcileInFrame } from '../reconcile-frame.ts';
import { backupReport, jobResults, restoreRefusals } from './backup-status.ts';
import { ensureKey, ensureTls, type Identity, readCaCert, readIdentity } from './credentials.ts';
import type { LedgerReconcileDeps, Result } from './deps.ts';
import { readPublishedGenesis } from './genesis-source.ts';
import { membershipStep } from './membership.ts';
import { type ClusterObservation, observeNodes } from './observe.ts';
import { STATEFUL_SET } from './resources.ts';
import { rotationStep } from './rotation.ts';
import { type KeyGeneration, runningGeneration } from './rotation-plan.ts';
import { forgetClusterMetrics, type MembershipOutcome, reportStatus } from './status.ts';

export {
  FINALIZER,
  type LedgerReconcileDeps,
  NODE_CERT_DAYS,
  PROGRESS_MS,
  RESYNC_MS,
  type ReconcileStats,
} from './deps.ts';

/** Validators that still have a StatefulSet of this cluster (desired or on their way out). */
function existingValidators(deps: LedgerReconcileDeps, lc: KubeObject): string[] {
  const namespace = lc.metadata.namespace ?? '';
  return deps
    .list(STATEFUL_SET, namespace)
    .filter((s) => controllerOf(s)?.uid === lc.metadata.uid)
    .map((s) => s.metadata.labels?.[VALIDATOR_LABEL] ?? '')
    .filter(Boolean);
}

/** The key generation a validator's StatefulSet mounts now (its `key` volume's Secret), if it has one. */
function mountedKeyGeneration(sts: KubeObject | undefined, validator: string): number | undefined {
  const volumes = (sts?.spec?.template?.spec?.volumes ?? []) as Array<{
    name: string;
    secret?: { secretName?: string };
  }>;
  const name = volumes.find((v) => v.name === 'key')?.secret?.secretName;
  if (!name) return undefined;
  if (name === validatorNames(validator).keySecret) return 0;
  const m = new RegExp(`^${validator}-key-(\\d+)$`).exec(name);
  return m ? Number(m[1]) : undefined;
}

function byIndex(cluster: string) {
  return (a: string, b: string) => (validatorIndex(cluster, a) ?? 0) - (validatorIndex(cluster, b) ?? 0);
}

/** Deletion: stop every validator (StatefulSets); the garbage collector removes the rest. */
async function stopValidators(deps: LedgerReconcileDeps, lc: KubeObject, ctx: ApplyContext): Promise<void> {
  const namespace = lc.metadata.namespace ?? '';
  for (const name of existingValidators(deps, lc)) await apply(ctx, STATEFUL_SET, namespace, name, null);
  forgetClusterMetrics(deps.metrics, lc);
}

/**
 * One reconcile of a LedgerCluster: Secrets and genesis (created once, never regenerated), the peers list,
 * each validator's Service and StatefulSet, the client Service, then what the nodes say (height, active set),
 * the membership step, and the status.
 */
export function reconcileLedgerCluster(deps: LedgerReconcileDeps, key: string): Promise<Result> {
  return reconcileInFrame(deps, key, {
    type: RESOURCES.LedgerCluster,
    schema: ledgerClusterSpec,
    specFields: (lc) => ({ selector: selectorString(lc as LedgerCluster) }),
    cleanUp: (lc, ctx) => stopValidators(deps, lc, ctx),
    finalizedNote: 'Validators stopped; Secrets, ConfigMaps, Services and volumes are removed by the garbage collector',
    reconcileSpec: (lc, spec, ctx) => reconcileSpec(deps, lc, spec, ctx),
  });
}

async function reconcileSpec(
  deps: LedgerReconcileDeps,
  lcObj: KubeObject,
  spec: LedgerClusterSpec,
  ctx: ApplyContext,
): Promise<Result> {
  const namespace = lcObj.metadata.namespace ?? '';
  const lc = lcObj as LedgerCluster;
  if (spec.tls.mode !== 'disabled' && spec.tls.issuerRef) {
    throw new SpecRefusedError(
      'Unsupported',
      'tls.issuerRef (cert-manager) is not supported by this operator version; use tls.caSecretRef or the operator-managed CA',
    );
  }

  const names = clusterNames(lc);
  const desired = desiredValidators(lc);
  const existing = existingValidators(deps, lcObj);
  const members = [...new Set([...desired, ...existing])].sort(byIndex(lc.metadata.name));

  // 1. Generated once, never regenerated: the token (unless the chain's shared one is referenced), each
  // validator's key, the CA.
  if (!spec.clusterTokenSecretRef && !deps.lookup(RESOURCES.Secret, namespace, names.tokenSecret)) {
    await createIfAbsent(ctx, RESOURCES.Secret, tokenSecret(lc, randomClusterToken()));
  }
  // A restored cluster takes the chain's genesis and keys from its identity Secret (read only while needed).
  let identityRead: Promise<Identity | undefined> | undefined;
  const identity = () => {
    identityRead ??= readIdentity(deps, lc, spec);
    return identityRead;
  };
  for (const v of members) await ensureKey(ctx, deps, lc, v, identity);
  // Each validator's key generations (a rotation adds one), and the one its pod runs.
  const rotation = lc.status?.keyRotation;
  const ownSecrets = deps.list(RESOURCES.Secret, namespace).filter((x) => controllerOf(x)?.uid === lcObj.metadata.uid);
  const generations = new Map<string, KeyGeneration[]>();
  const keys = new Map<string, string>();
  const keySecretNames = new Map<string, string>();
  for (const v of members) {
    const gens = keySecrets(ownSecrets, v).map((x) => ({
      generation: keyGeneration(x),
      publicKey: x.metadata.annotations?.[PUBLIC_KEY_ANNOTATION] ?? '',
    }));
    generations.set(v, gens);
    const running = runningGeneration(
      v,
      gens,
      mountedKeyGeneration(deps.lookup(STATEFUL_SET, namespace, v), v),
      rotation,
    );
    if (!running) throw new OperatorError('KEY_UNREADABLE', `${v} has no key Secret in the cache yet`);
    keys.set(v, running.publicKey);
    keySecretNames.set(v, keySecretName(v, running.generation));
  }

  // 2. Genesis: once, from the validators desired when the cluster is first reconciled (a restored cluster: the
  // chain's own genesis file); immutable afterwards.
  let genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
  const restored = spec.bootstrap ? await (genesis ? undefined : identity()) : undefined;
  const from = spec.genesis?.from;
  if (!genesis && restored) {
    const inGenesis = desired.filter((v) => restored.genesisKeys.has(keys.get(v) ?? ''));
    await createIfAbsent(ctx, RESOURCES.ConfigMap, genesisConfigMapOf(lc, restored.genesis, inGenesis));
    genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
  } else if (!genesis && from) {
    // Joining another organization's chain: its published genesis, copied once into our own immutable ConfigMap.
    const { text, source } = await readPublishedGenesis(deps, namespace, from);
    const checked = checkPublishedGenesis(text, from.hash);
    if (typeof checked === 'string') throw new SpecRefusedError('GenesisRefused', `${source}: ${checked}`);
    await createIfAbsent(ctx, RESOURCES.ConfigMap, joinedGenesisConfigMap(lc, text, source));
    genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
  } else if (!genesis) {
    // External validators present at creation are part of the genesis set too.
    const initial = [
      ...desired.map((v) => ({ name: v, publicKey: keys.get(v) ?? '' })),
      ...spec.externalValidators.map((e) => ({ name: externalNodeId(e.publicKey), publicKey: e.publicKey })),
    ];
    if (initial.length === 0) throw new OperatorError('NO_VALIDATORS', 'genesis needs at least one validator');
    await createIfAbsent(ctx, RESOURCES.ConfigMap, genesisConfigMap(lc, spec, initial, deps.now?.() ?? new Date()));
    genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
  } else if (controllerOf(genesis)?.uid !== lcObj.metadata.uid) {
    await createIfAbsent(ctx, RESOURCES.ConfigMap, genesis); // refuses
  }
  const genesisSet = new Set(genesisValidators(genesis));

  // 3. TLS: the CA, and a certificate per validator (issued when absent, renewed as a new Secret generation).
  const tlsNames =
    spec.tls.mode === 'disabled' ? new Map<string, string>() : await ensureTls(ctx, deps, lc, spec, members);

  // 4. Peers (every validator with a workload, plus the external ones), then each validator's workload.
  const peers = members.map((v) => ({ name: v, publicKey: keys.get(v) ?? '' }));
  await apply(ctx, RESOURCES.ConfigMap, namespace, names.peersConfigMap, peersConfigMap(lc, spec, peers));
  // A changed StatefulSet (new image or settings) rolls one validator at a time (updateAllowed).
  const statefulSets = new Map(members.map((v) => [v, deps.lookup(STATEFUL_SET, namespace, v)]));
  const updating = new Set<string>();
  const heldBack: string[] = [];
  for (const v of members) {
    await apply(ctx, RESOURCES.Service, namespace, validatorNames(v).service, validatorService(lc, v));
    const desiredSts = validatorStatefulSet(lc, spec, v, tlsNames.get(v), keySecretNames.get(v));
    const current = statefulSets.get(v);
    if (decide(desiredSts, current, lcObj.metadata.uid ?? '').action === 'update') {
      if (!updateAllowed(v, statefulSets, updating)) {
        heldBack.push(v);
        continue;
      }
      if (statefulSetReady(current)) updating.add(v);
    }
    await apply(ctx, STATEFUL_SET, namespace, validatorNames(v).statefulSet, desiredSts);
  }
  await apply(ctx, RESOURCES.Service, namespace, names.clientService, clientService(lc));
  await apply(ctx, RESOURCES.Ingress, namespace, names.ingress, clientIngress(lc, spec));
  await apply(ctx, RESOURCES.PodDisruptionBudget, namespace, names.pdb, podDisruptionBudget(lc, desired.length));
  // Backups: a CronJob that reads the nodes' API like any client, and the restore drill's.
  const backups = backupNames(lc);
  await apply(ctx, RESOURCES.CronJob, namespace, backups.backupCronJob, backupCronJob(lc, spec, desired));
  await apply(ctx, RESOURCES.CronJob, namespace, backups.verifyCronJob, verifyCronJob(lc, spec, desired));

  // 5. What the nodes say.
  const url = deps.nodeUrl ?? validatorUrl;
  const podReady = new Map(
    members.map((v) => [v, statefulSetReady(deps.lookup(STATEFUL_SET, namespace, validatorNames(v).statefulSet))]),
  );
  const caPem = spec.tls.mode === 'disabled' ? undefined : await readCaCert(deps, lc, spec);
  const api = deps.nodeApi({ caPem });
  let observation: ClusterObservation;
  try {
    observation = await observeNodes(
      api,
      members.map((v) => ({
        name: v,
        publicKey: keys.get(v) ?? '',
        podReady: podReady.get(v) ?? false,
        url: url(lc, spec, v),
      })),
    );
  } finally {
    await api.close?.();
  }

  // 6. Membership: one change at a time. A key rotation under way owns the membership changes until it is done;
  // otherwise the planner's step, then (with nothing pending) a rotation may start.
  const rotating = rotation !== undefined && rotation.step !== 'Done';
  const membership: MembershipOutcome = rotating
    ? { pending: lc.status?.pendingChange, waiting: undefined, deleted: undefined }
    : await membershipStep(deps, ctx, lc, spec, { desired, keys, observation });
  const settledNow = (v: string) => rolloutSettled(deps.lookup(STATEFUL_SET, namespace, v)) && !heldBack.includes(v);
  const keyRotation = await rotationStep(deps, ctx, lc, spec, {
    desired,
    generations,
    running: keys,
    observation,
    settled: settledNow,
    membershipPending: membership.pending !== undefined,
  });
  const remaining = membership.deleted ? members.filter((v) => v !== membership.deleted) : members;

  // Backups: what the backup and drill Jobs and the restore init containers said (their pods' termination messages).
  const pods = deps.list(RESOURCES.Pod, namespace);
  const backup = backupReport(
    lc,
    spec,
    jobResults(pods, lc.metadata.name),
    restoreRefusals(pods, lc.metadata.name),
    observation.height,
    deps.now?.() ?? new Date(),
  );

  // 7. Status.
  return await reportStatus(deps, lcObj, spec, {
    desired,
    members: remaining,
    keys,
    genesisSet,
    podReady,
    observation,
    membership,
    heldBack,
    now: deps.now?.() ?? new Date(),
    backup,
    keyRotation,
  });
}
