import { X509Certificate } from 'node:crypto';
import type { Logger } from 'pino';
import { type LedgerCluster, type LedgerClusterSpec, ledgerClusterSpec } from '../../api/index.ts';
import { isConflict, isNotFound, KubeApiError, NotOwnedError, OperatorError } from '../../errors.ts';
import { type ApplyContext, apply, createIfAbsent, decide } from '../../kube/apply.ts';
import type { KubeClient } from '../../kube/client.ts';
import { EventBatch, type EventRecorder } from '../../kube/events.ts';
import { RESOURCES, type ResourceType, resourcePath } from '../../kube/resources.ts';
import { controllerOf, type KubeObject, splitKey } from '../../kube/types.ts';
import { createClusterCa, issueNodeCertificate } from '../../ledger/index.ts';
import {
  caSecret,
  clientService,
  clusterNames,
  currentTlsSecret,
  desiredValidators,
  externalNodeId,
  genesisConfigMap,
  genesisValidators,
  keySecret,
  type Pem,
  PUBLIC_KEY_ANNOTATION,
  peersConfigMap,
  podDisruptionBudget,
  quorumOf,
  randomClusterToken,
  secretValue,
  selectorString,
  statefulSetReady,
  TOKEN_FILE,
  tlsGeneration,
  tlsRenewalDue,
  tlsSecret,
  tokenSecret,
  updateAllowed,
  VALIDATOR_LABEL,
  validatorDnsNames,
  validatorIndex,
  validatorNames,
  validatorService,
  validatorStatefulSet,
  validatorUrl,
} from '../../specs/ledger-cluster/index.ts';
import { setCondition } from '../../status/conditions.ts';
import { type Status, updateStatus } from '../../status/status-writer.ts';
import { type PendingStatus, pendingFromStatus, pendingSettled, planStep } from './membership-step.ts';
import { type ClusterObservation, type NodeApi, observeNodes } from './observe.ts';
import { PVC, STATEFUL_SET } from './resources.ts';

/** Keeps a LedgerCluster alive until the operator has stopped its validators. */
export const FINALIZER = 'scriptorium.dev/cleanup';
/** How often a healthy cluster is looked at again (height, members); sooner while something is in progress. */
export const RESYNC_MS = 15_000;
export const PROGRESS_MS = 3_000;
/** Validity of operator-issued validator certificates (the operator cannot rewrite a Secret, see docs/operator.md). */
export const NODE_CERT_DAYS = 365;

export interface ReconcileStats {
  writes: number;
  statusWrites: number;
  reconciles: number;
}

export interface LedgerReconcileDeps {
  client: KubeClient;
  lookup: (type: ResourceType, namespace: string, name: string) => KubeObject | undefined;
  list: (type: ResourceType, namespace: string) => KubeObject[];
  onWrite: (type: ResourceType, obj: KubeObject) => void;
  recorder: EventRecorder;
  log: Logger;
  stats: ReconcileStats;
  /** Node API client for one cluster (its token and CA). */
  nodeApi: (opts: { token?: string; caPem?: string; clientCert?: Pem }) => NodeApi;
  /** Resubmit a membership change that has not taken effect after this long (planner default 60 s). */
  resubmitAfterMs?: number;
  /** Base URL of a validator's API; the cluster DNS name by default (tests point it at loopback). */
  nodeUrl?: (lc: LedgerCluster, spec: LedgerClusterSpec, validator: string) => string;
  now?: () => Date;
}

type Cond = { status: 'True' | 'False'; reason: string; message: string };
type Result = { requeueAfterMs?: number } | undefined;

function conditionsMutator(lc: KubeObject, degraded: Cond, progressing: Cond, extra: Partial<Status> = {}) {
  const generation = lc.metadata.generation;
  return (status: Status): Status => {
    let conditions = setCondition(status.conditions, { type: 'Degraded', ...degraded }, generation);
    conditions = setCondition(conditions, { type: 'Progressing', ...progressing }, generation);
    const next: Status = { ...status, ...extra, observedGeneration: generation, conditions };
    for (const [k, v] of Object.entries(extra)) if (v === undefined) delete next[k];
    return next;
  };
}

async function writeStatus(deps: LedgerReconcileDeps, lc: KubeObject, mutate: (s: Status) => Status): Promise<void> {
  const { written, object } = await updateStatus(
    deps.client,
    RESOURCES.LedgerCluster,
    lc.metadata.namespace ?? '',
    lc.metadata.name ?? '',
    mutate,
    { cached: lc },
  );
  if (written && object) {
    deps.stats.statusWrites++;
    deps.onWrite(RESOURCES.LedgerCluster, { ...object, apiVersion: lc.apiVersion, kind: lc.kind });
  }
}

async function patchFinalizers(deps: LedgerReconcileDeps, lc: KubeObject, finalizers: string[]): Promise<KubeObject> {
  const updated = await deps.client.request<KubeObject>(
    'PATCH',
    resourcePath(RESOURCES.LedgerCluster, lc.metadata.namespace, lc.metadata.name),
    {
      contentType: 'application/merge-patch+json',
      body: { metadata: { resourceVersion: lc.metadata.resourceVersion, finalizers } },
    },
  );
  deps.stats.writes++;
  return { ...updated, apiVersion: lc.apiVersion, kind: lc.kind };
}

/** Read a Secret's data (only our own key material or a referenced CA; never cached, never logged). */
async function readSecret(deps: LedgerReconcileDeps, namespace: string, name: string): Promise<KubeObject | undefined> {
  try {
    return await deps.client.request<KubeObject>('GET', resourcePath(RESOURCES.Secret, namespace, name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

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

/** Deletion: stop every validator (StatefulSets), then let the garbage collector remove the rest. */
async function finalize(deps: LedgerReconcileDeps, lc: KubeObject, ctx: ApplyContext): Promise<void> {
  if (!lc.metadata.finalizers?.includes(FINALIZER)) return;
  const namespace = lc.metadata.namespace ?? '';
  for (const name of existingValidators(deps, lc)) await apply(ctx, STATEFUL_SET, namespace, name, null);
  try {
    await patchFinalizers(
      deps,
      lc,
      (lc.metadata.finalizers ?? []).filter((f) => f !== FINALIZER),
    );
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  await deps.recorder.record(lc, {
    type: 'Normal',
    reason: 'Finalized',
    action: 'Delete',
    note: 'Validators stopped; Secrets, ConfigMaps, Services and volumes are removed by the garbage collector',
  });
}

/**
 * One reconcile of a LedgerCluster: Secrets and genesis (created once, never regenerated), the peers list,
 * each validator's Service and StatefulSet, the client Service, then what the nodes say (height, active set),
 * the membership step, and the status.
 */
export async function reconcileLedgerCluster(deps: LedgerReconcileDeps, key: string): Promise<Result> {
  const { namespace, name } = splitKey(key);
  let lc = deps.lookup(RESOURCES.LedgerCluster, namespace, name);
  if (!lc) return undefined;
  deps.stats.reconciles++;
  const writes = { count: 0 };
  const ctx: ApplyContext = {
    client: deps.client,
    owner: lc,
    lookup: deps.lookup,
    onWrite: deps.onWrite,
    recorder: deps.recorder,
    events: new EventBatch(),
    writes,
  };
  try {
    if (lc.metadata.deletionTimestamp) {
      await finalize(deps, lc, ctx);
      return undefined;
    }
    if (!lc.metadata.finalizers?.includes(FINALIZER)) {
      lc = await patchFinalizers(deps, lc, [...(lc.metadata.finalizers ?? []), FINALIZER]);
      ctx.owner = lc;
    }
    return await reconcileSpec(deps, lc, ctx);
  } finally {
    deps.stats.writes += writes.count;
    await ctx.events?.flush(deps.recorder, ctx.owner);
  }
}

/** The key Secret of a validator, created when absent; returns its public key (from the annotation). */
async function ensureKey(ctx: ApplyContext, deps: LedgerReconcileDeps, lc: LedgerCluster, validator: string) {
  const namespace = lc.metadata.namespace ?? '';
  const secretName = validatorNames(validator).keySecret;
  let meta = deps.lookup(RESOURCES.Secret, namespace, secretName);
  if (!meta) {
    await createIfAbsent(ctx, RESOURCES.Secret, keySecret(lc, validator));
    meta = deps.lookup(RESOURCES.Secret, namespace, secretName);
  } else if (controllerOf(meta)?.uid !== lc.metadata.uid) {
    await createIfAbsent(ctx, RESOURCES.Secret, meta); // refuses with NotOwnedError and an Event
  }
  const publicKey = meta?.metadata.annotations?.[PUBLIC_KEY_ANNOTATION];
  if (!publicKey || !/^[0-9a-f]{64}$/.test(publicKey)) {
    throw new OperatorError('KEY_UNREADABLE', `Secret ${secretName} has no valid ${PUBLIC_KEY_ANNOTATION} annotation`);
  }
  return publicKey;
}

/** The CA that signs validator certificates: a referenced Secret, or the operator-managed one (created once). */
async function clusterCa(
  ctx: ApplyContext | undefined,
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  withKey: boolean,
): Promise<Pem | undefined> {
  const namespace = lc.metadata.namespace ?? '';
  const ref = spec.tls.caSecretRef?.name;
  const name = ref ?? clusterNames(lc).caSecret;
  if (ctx && !ref && !deps.lookup(RESOURCES.Secret, namespace, name)) {
    const now = deps.now?.() ?? new Date();
    const ca = await createClusterCa({ commonName: `${lc.metadata.name}.${namespace} ledger CA`.slice(0, 64), now });
    await createIfAbsent(ctx, RESOURCES.Secret, caSecret(lc, ca));
  }
  if (!withKey) return undefined;
  const secret = await readSecret(deps, namespace, name);
  const certPem = secretValue(secret, 'tls.crt');
  const keyPem = secretValue(secret, 'tls.key');
  if (!certPem || !keyPem) {
    throw new OperatorError('CA_NOT_FOUND', `Secret ${name} must hold tls.crt and tls.key (the cluster CA)`);
  }
  return { certPem, keyPem };
}

async function reconcileSpec(deps: LedgerReconcileDeps, lcObj: KubeObject, ctx: ApplyContext): Promise<Result> {
  const namespace = lcObj.metadata.namespace ?? '';
  const lc = lcObj as LedgerCluster;
  const parsed = ledgerClusterSpec.safeParse(lc.spec);
  if (!parsed.success) {
    const message = `invalid spec: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
    await writeStatus(
      deps,
      lcObj,
      conditionsMutator(
        lcObj,
        { status: 'True', reason: 'InvalidSpec', message },
        { status: 'False', reason: 'InvalidSpec', message },
      ),
    );
    await deps.recorder.record(lcObj, { type: 'Warning', reason: 'InvalidSpec', action: 'Refuse', note: message });
    return undefined;
  }
  const spec = parsed.data;
  const selector = selectorString(lc);
  if (spec.tls.mode !== 'disabled' && spec.tls.issuerRef) {
    const message =
      'tls.issuerRef (cert-manager) is not supported by this operator version; use tls.caSecretRef or the operator-managed CA';
    await writeStatus(
      deps,
      lcObj,
      conditionsMutator(
        lcObj,
        { status: 'True', reason: 'Unsupported', message },
        { status: 'False', reason: 'Unsupported', message },
        { selector },
      ),
    );
    await deps.recorder.record(lcObj, { type: 'Warning', reason: 'Unsupported', action: 'Refuse', note: message });
    return undefined;
  }

  try {
    const names = clusterNames(lc);
    const desired = desiredValidators(lc);
    const existing = existingValidators(deps, lcObj);
    const members = [...new Set([...desired, ...existing])].sort(byIndex(lc.metadata.name));

    // 1. Generated once, never regenerated: the token, each validator's key, the CA.
    if (!deps.lookup(RESOURCES.Secret, namespace, names.tokenSecret)) {
      await createIfAbsent(ctx, RESOURCES.Secret, tokenSecret(lc, randomClusterToken()));
    }
    const keys = new Map<string, string>();
    for (const v of members) keys.set(v, await ensureKey(ctx, deps, lc, v));

    // 2. Genesis: once, from the validators desired when the cluster is first reconciled; immutable afterwards.
    let genesis = deps.lookup(RESOURCES.ConfigMap, namespace, names.genesisConfigMap);
    if (!genesis) {
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

    // 3. TLS: the CA, and a certificate per validator: issued when it has none, renewed (a new Secret generation)
    //    in the last third of its lifetime or when its DNS names changed.
    const tlsNames = new Map<string, string>();
    if (spec.tls.mode !== 'disabled') {
      const now = deps.now?.() ?? new Date();
      const secrets = deps.list(RESOURCES.Secret, namespace).filter((x) => controllerOf(x)?.uid === lcObj.metadata.uid);
      const toIssue: Array<{ validator: string; generation: number; renewal: boolean }> = [];
      for (const v of members) {
        const current = currentTlsSecret(secrets, v);
        if (current && !tlsRenewalDue(current, now, validatorDnsNames(lc, v))) {
          tlsNames.set(v, current.metadata.name ?? '');
        } else {
          const generation = current ? tlsGeneration(current) + 1 : 0;
          toIssue.push({ validator: v, generation, renewal: current !== undefined });
        }
      }
      const ca = await clusterCa(ctx, deps, lc, spec, toIssue.length > 0);
      for (const item of toIssue) {
        if (!ca) break;
        const dnsNames = validatorDnsNames(lc, item.validator);
        const cert = await issueNodeCertificate(ca, {
          commonName: item.validator,
          dnsNames,
          now,
          validityDays: NODE_CERT_DAYS,
        });
        const x509 = new X509Certificate(cert.certPem);
        const secret = tlsSecret(lc, item.validator, cert, ca.certPem, {
          generation: item.generation,
          notBefore: new Date(x509.validFrom),
          notAfter: new Date(x509.validTo),
          dnsNames,
        });
        await createIfAbsent(ctx, RESOURCES.Secret, secret);
        tlsNames.set(item.validator, secret.metadata.name ?? '');
        if (item.renewal) {
          await deps.recorder.record(lcObj, {
            type: 'Normal',
            reason: 'CertificateRenewed',
            action: 'Create',
            note: `New certificate for ${item.validator} in Secret ${secret.metadata.name}; its pod moves to it in the next rollout step`,
          });
        }
      }
    }

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
    });
  } catch (err) {
    await reportFailure(deps, lcObj, err);
    throw err;
  }
}

const caCerts = new Map<string, string | undefined>();

/** The CA certificate (public) the operator's node client trusts; read once per Secret resourceVersion. */
async function readCaCert(deps: LedgerReconcileDeps, lc: LedgerCluster, spec: LedgerClusterSpec) {
  const namespace = lc.metadata.namespace ?? '';
  const name = spec.tls.caSecretRef?.name ?? clusterNames(lc).caSecret;
  const version = deps.lookup(RESOURCES.Secret, namespace, name)?.metadata.resourceVersion;
  const memo = `${namespace}/${name}@${version}`;
  if (version && caCerts.has(memo)) return caCerts.get(memo);
  const pem = secretValue(await readSecret(deps, namespace, name), 'tls.crt');
  if (caCerts.size > 1000) caCerts.clear();
  if (version) caCerts.set(memo, pem);
  return pem;
}

interface Snapshot {
  desired: string[];
  members: string[];
  keys: Map<string, string>;
  genesisSet: Set<string>;
  podReady: Map<string, boolean>;
  observation: ClusterObservation;
  membership: MembershipOutcome;
  /** Validators whose changed StatefulSet waits for another validator's rollout. */
  heldBack: string[];
}

interface MembershipOutcome {
  pending: PendingStatus | undefined;
  /** Why no change could be made now (planner `wait`, or a failed submission). */
  waiting: string | undefined;
  /** A retired validator whose workload this reconcile deleted. */
  deleted: string | undefined;
}

/** The name of a public key among this cluster's validators (key Secrets in the cache), else the key itself. */
function nameOfKey(deps: LedgerReconcileDeps, lc: LedgerCluster, keys: Map<string, string>) {
  const byKey = new Map<string, string>();
  for (const secret of deps.list(RESOURCES.Secret, lc.metadata.namespace ?? '')) {
    const key = secret.metadata.annotations?.[PUBLIC_KEY_ANNOTATION];
    const validator = secret.metadata.labels?.[VALIDATOR_LABEL];
    if (key && validator && controllerOf(secret)?.uid === lc.metadata.uid) byKey.set(key, validator);
  }
  for (const [name, key] of keys) byKey.set(key, name);
  return byKey;
}

async function membershipStep(
  deps: LedgerReconcileDeps,
  ctx: ApplyContext,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  s: { desired: string[]; keys: Map<string, string>; observation: ClusterObservation },
): Promise<MembershipOutcome> {
  const namespace = lc.metadata.namespace ?? '';
  const now = deps.now?.() ?? new Date();
  const names = nameOfKey(deps, lc, s.keys);
  const keyOf = new Map([...names].map(([key, name]) => [name, key]));
  const label = (key: string) => names.get(key) ?? key;
  let recorded = lc.status?.pendingChange;
  let pending = pendingFromStatus(recorded, (name) => keyOf.get(name));
  if (pending && pendingSettled(pending, s.observation)) {
    await deps.recorder.record(lc, {
      type: 'Normal',
      reason: 'MembershipChangeFinalized',
      action: 'Reconcile',
      note: `${pending.change.action} ${label(pending.change.validator)} is final: the chain's active set has ${s.observation.activeKeys?.length ?? 0} validators`,
    });
    recorded = undefined;
    pending = undefined;
  }
  const action = planStep({
    desired: s.desired.map((name) => ({ name, publicKey: s.keys.get(name) ?? '' })),
    externalKeys: spec.externalValidators.map((e) => e.publicKey),
    observation: s.observation,
    pending,
    now,
    ...(deps.resubmitAfterMs !== undefined ? { resubmitAfterMs: deps.resubmitAfterMs } : {}),
  });
  switch (action.type) {
    case 'none':
      return { pending: recorded, waiting: undefined, deleted: undefined };
    case 'wait':
      return { pending: recorded, waiting: action.reason, deleted: undefined };
    case 'deleteWorkload': {
      const n = validatorNames(action.name);
      await apply(ctx, STATEFUL_SET, namespace, n.statefulSet, null);
      await apply(ctx, RESOURCES.Service, namespace, n.service, null);
      await deletePvc(deps, namespace, n.pvc);
      await deps.recorder.record(lc, {
        type: 'Normal',
        reason: 'ValidatorRetired',
        action: 'Delete',
        note: `${action.name} is no longer in the chain's active set: its StatefulSet, Service and volume are deleted`,
      });
      return { pending: recorded, waiting: undefined, deleted: action.name };
    }
    case 'submit': {
      const what = `${action.change.action} ${label(action.change.validator)}`;
      try {
        await submitChange(deps, lc, spec, action.via, action.change);
      } catch (err) {
        const message = `${what} through ${action.via} failed: ${err instanceof Error ? err.message.slice(0, 300) : 'error'}`;
        await deps.recorder.record(lc, {
          type: 'Warning',
          reason: 'MembershipChangeFailed',
          action: 'Reconcile',
          note: message,
        });
        return { pending: recorded, waiting: message, deleted: undefined };
      }
      await deps.recorder.record(lc, {
        type: 'Normal',
        reason: 'MembershipChangeSubmitted',
        action: 'Update',
        note: `${what} submitted through ${action.via}${action.resubmission ? ' (resubmitted: the first submission did not take effect)' : ''}`,
      });
      return {
        pending: {
          kind: action.change.action,
          validator: label(action.change.validator),
          since: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
          via: action.via,
        },
        waiting: undefined,
        deleted: undefined,
      };
    }
  }
}

async function deletePvc(deps: LedgerReconcileDeps, namespace: string, name: string): Promise<void> {
  try {
    await deps.client.request('DELETE', resourcePath(PVC, namespace, name), {
      body: { propagationPolicy: 'Background' },
    });
    deps.stats.writes++;
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/**
 * POST /membership through one validator, with the cluster token (and, in mutual TLS, a short-lived client
 * certificate from the cluster CA, held in memory only).
 */
async function submitChange(
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  via: string,
  change: { action: 'ADD' | 'REMOVE'; validator: string },
): Promise<void> {
  const namespace = lc.metadata.namespace ?? '';
  const token = secretValue(await readSecret(deps, namespace, clusterNames(lc).tokenSecret), TOKEN_FILE);
  if (!token) throw new OperatorError('TOKEN_NOT_FOUND', `Secret ${clusterNames(lc).tokenSecret} has no token`);
  let caPem: string | undefined;
  let clientCert: Pem | undefined;
  if (spec.tls.mode !== 'disabled') {
    caPem = await readCaCert(deps, lc, spec);
    if (spec.tls.mode === 'mutual') {
      const ca = await clusterCa(undefined, deps, lc, spec, true);
      if (ca) {
        clientCert = await issueNodeCertificate(ca, {
          commonName: 'scriptorium-operator',
          dnsNames: ['scriptorium-operator'],
          now: deps.now?.() ?? new Date(),
          validityDays: 1,
        });
      }
    }
  }
  const api = deps.nodeApi({ token, ...(caPem ? { caPem } : {}), ...(clientCert ? { clientCert } : {}) });
  try {
    await api.submitMembership((deps.nodeUrl ?? validatorUrl)(lc, spec, via), change);
  } finally {
    await api.close?.();
  }
}

async function reportStatus(
  deps: LedgerReconcileDeps,
  lcObj: KubeObject,
  spec: LedgerClusterSpec,
  s: Snapshot,
): Promise<Result> {
  const lc = lcObj as LedgerCluster;
  const active = s.observation.activeKeys ? new Set(s.observation.activeKeys) : undefined;
  const readyCount = s.desired.filter((v) => s.podReady.get(v)).length;
  const members = s.members.map((v) => {
    const seen = s.observation.members.find((m) => m.name === v);
    const key = s.keys.get(v) ?? '';
    const isValidator = active ? active.has(key) : s.genesisSet.has(v);
    return {
      name: v,
      role: isValidator ? ('validator' as const) : ('follower' as const),
      ...(seen?.height !== undefined ? { height: seen.height } : {}),
    };
  });
  const activeCount = active?.size;
  const quorum = activeCount !== undefined ? quorumOf(activeCount) : undefined;
  // Pods that are Ready but whose API the operator cannot reach: the operator's view is partial.
  const unreachableReady = s.observation.members.filter((m) => m.podReady && !m.reachable).map((m) => m.name);
  let degraded: Cond = { status: 'False', reason: 'AsExpected', message: 'All objects applied' };
  if (unreachableReady.length > 0) {
    degraded = {
      status: 'True',
      reason: 'NodesUnreachable',
      message: `The operator cannot reach the API of ${unreachableReady.join(', ')}`,
    };
  } else if (quorum !== undefined && activeCount !== undefined) {
    const healthyActive = s.observation.members.filter((m) => m.reachable && active?.has(m.publicKey)).length;
    const external = spec.externalValidators.filter((e) => active?.has(e.publicKey)).length;
    if (healthyActive + external < quorum) {
      degraded = {
        status: 'True',
        reason: 'QuorumAtRisk',
        message: `${healthyActive} of ${activeCount} active validators answer here (+${external} external); quorum is ${quorum}`,
      };
    }
  }
  let progressing: Cond;
  if (readyCount < s.desired.length) {
    const notReady = s.desired.filter((v) => !s.podReady.get(v));
    progressing = {
      status: 'True',
      reason: 'ValidatorsStarting',
      message: `${readyCount}/${s.desired.length} validators ready (waiting for ${notReady.slice(0, 5).join(', ')}${notReady.length > 5 ? ', …' : ''})`,
    };
  } else if (s.heldBack.length > 0) {
    progressing = {
      status: 'True',
      reason: 'RollingOut',
      message: `Updating one validator at a time; waiting: ${s.heldBack.slice(0, 5).join(', ')}${s.heldBack.length > 5 ? ', …' : ''}`,
    };
  } else if (s.membership.pending) {
    const p = s.membership.pending;
    progressing = {
      status: 'True',
      reason: 'MembershipChange',
      message: `${p.kind} ${p.validator} submitted${p.via ? ` through ${p.via}` : ''} at ${p.since ?? '?'}; waiting until it is final`,
    };
  } else if (s.membership.waiting) {
    progressing = { status: 'True', reason: 'MembershipWaiting', message: s.membership.waiting.slice(0, 1000) };
  } else if (s.members.length > s.desired.length) {
    progressing = {
      status: 'True',
      reason: 'Retiring',
      message: `Retiring ${s.members.filter((v) => !s.desired.includes(v)).join(', ')}`,
    };
  } else {
    progressing = {
      status: 'False',
      reason: 'ValidatorsReady',
      message: `${readyCount}/${s.desired.length} validators ready`,
    };
  }
  await writeStatus(
    deps,
    lcObj,
    conditionsMutator(lcObj, degraded, progressing, {
      validators: readyCount,
      selector: selectorString(lc),
      height: s.observation.height,
      activeValidators: activeCount,
      quorum,
      members,
      pendingChange: s.membership.pending,
    }),
  );
  return { requeueAfterMs: progressing.status === 'True' ? PROGRESS_MS : RESYNC_MS };
}

async function reportFailure(deps: LedgerReconcileDeps, lcObj: KubeObject, err: unknown): Promise<void> {
  const namespace = lcObj.metadata.namespace ?? '';
  if (err instanceof NotOwnedError) {
    await writeStatus(
      deps,
      lcObj,
      conditionsMutator(
        lcObj,
        { status: 'True', reason: 'ResourceConflict', message: err.message },
        { status: 'False', reason: 'ResourceConflict', message: err.message },
      ),
    );
  } else if (err instanceof KubeApiError && err.status !== 409) {
    const message = err.message.slice(0, 1000);
    await writeStatus(
      deps,
      lcObj,
      conditionsMutator(
        lcObj,
        { status: 'True', reason: 'ApplyFailed', message },
        { status: 'False', reason: 'ApplyFailed', message: 'An object was refused by the API server' },
      ),
    );
    await deps.recorder.record(lcObj, { type: 'Warning', reason: 'ApplyFailed', action: 'Reconcile', note: message });
  } else if (isConflict(err)) {
    deps.log.debug({ key: `${namespace}/${lcObj.metadata.name}` }, 'conflict; retrying');
  } else if (err instanceof OperatorError) {
    await writeStatus(
      deps,
      lcObj,
      conditionsMutator(
        lcObj,
        { status: 'True', reason: 'ReconcileFailed', message: err.message },
        { status: 'False', reason: 'ReconcileFailed', message: err.message },
      ),
    );
    await deps.recorder.record(lcObj, {
      type: 'Warning',
      reason: 'ReconcileFailed',
      action: 'Reconcile',
      note: err.message,
    });
  }
}
