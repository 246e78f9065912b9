import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import { isNotFound, OperatorError } from '../../errors.ts';
import { type ApplyContext, apply } from '../../kube/apply.ts';
import { RESOURCES, resourcePath } from '../../kube/resources.ts';
import { controllerOf } from '../../kube/types.ts';
import { issueNodeCertificate } from '../../ledger/index.ts';
import {
  type Pem,
  PUBLIC_KEY_ANNOTATION,
  secretValue,
  tokenRef,
  VALIDATOR_LABEL,
  validatorNames,
  validatorUrl,
} from '../../specs/ledger-cluster/index.ts';
import { clusterCa, readCaCert } from './credentials.ts';
import { type LedgerReconcileDeps, readSecret } from './deps.ts';
import { pendingFromStatus, pendingSettled, planStep } from './membership-plan.ts';
import type { ClusterObservation } from './observe.ts';
import { PVC, STATEFUL_SET } from './resources.ts';
import type { MembershipOutcome } from './status.ts';

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

export async function membershipStep(
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
export async function submitChange(
  deps: LedgerReconcileDeps,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  via: string,
  change: { action: 'ADD' | 'REMOVE'; validator: string },
): Promise<void> {
  const namespace = lc.metadata.namespace ?? '';
  const ref = tokenRef(lc, spec);
  const token = secretValue(await readSecret(deps, namespace, ref.name), ref.key);
  if (!token) throw new OperatorError('TOKEN_NOT_FOUND', `Secret ${ref.name} has no ${ref.key}`);
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
