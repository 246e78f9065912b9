import { type LedgerCluster, type LedgerClusterSpec, ledgerClusterSpec } from '../../api/index.ts';
import { OperatorError, SpecRefusedError } from '../../errors.ts';
import { type ApplyContext, apply, createIfAbsent, decide } from '../../kube/apply.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { controllerOf, type KubeObject } from '../../kube/types.ts';
import {
  checkPublishedGenesis,
  clientIngress,
  clientService,
  clusterNames,
  desiredValidators,
  externalNodeId,
  genesisConfigMap,
  genesisValidators,
  joinedGenesisConfigMap,
  peersConfigMap,
  podDisruptionBudget,
  randomClusterToken,
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
} from '../../specs/ledger-cluster/index.ts';
import { reconcileInFrame } from '../reconcile-frame.ts';
import { ensureKey, ensureTls, readCaCert } from './credentials.ts';
import type { LedgerReconcileDeps, Result } from './deps.ts';
import { readPublishedGenesis } from './genesis-source.ts';
import { membershipStep } from './membership.ts';
import { type ClusterObservation, observeNodes } from './observe.ts';
import { STATEFUL_SET } from './resources.ts';
import { forgetClusterMetrics, reportStatus } from './status.ts';

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
  const keys = new Map<string, string>();
  for (const v of members) keys.set(v, await ensureKey(ctx, deps, lc, v));

  // 2. Genesis: once, from the validators desired when the cluster is first reconciled; immutable afterwards.
  let genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
  const from = spec.genesis?.from;
  if (!genesis && from) {
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
    const desiredSts = validatorStatefulSet(lc, spec, v, tlsNames.get(v));
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

  // 6. Membership: one change at a time, planned by the pure planner from what the nodes said.
  const membership = await membershipStep(deps, ctx, lc, spec, { desired, keys, observation });
  const remaining = membership.deleted ? members.filter((v) => v !== membership.deleted) : members;

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
  });
}
