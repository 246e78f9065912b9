// The I/O of a key rotation step (the planner is rotation-plan.ts): a new key Secret generation, an ADD or REMOVE
// through a healthy validator, and an Event for every step. The rotation's state is returned for the status
// write, which is what lets a restarted operator carry on where it stopped.
import { generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { type LedgerCluster, type LedgerClusterSpec, ROTATE_KEY_ANNOTATION } from '../../api/index.ts';
import { type ApplyContext, createIfAbsent } from '../../kube/apply.ts';
import { RESOURCES } from '../../kube/resources.ts';
import { keySecret } from '../../specs/ledger-cluster/index.ts';
import type { LedgerReconcileDeps } from './deps.ts';
import { submitChange } from './membership.ts';
import type { ClusterObservation } from './observe.ts';
import { type KeyGeneration, planRotation, type RotationOutcome, type RotationState } from './rotation-plan.ts';

export async function rotationStep(
  deps: LedgerReconcileDeps,
  ctx: ApplyContext,
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  s: {
    desired: string[];
    generations: Map<string, KeyGeneration[]>;
    running: Map<string, string>;
    observation: ClusterObservation;
    settled: (validator: string) => boolean;
    membershipPending: boolean;
  },
): Promise<RotationOutcome> {
  const now = deps.now?.() ?? new Date();
  const state = lc.status?.keyRotation;
  const action = planRotation({
    request: lc.metadata.annotations?.[ROTATE_KEY_ANNOTATION],
    state,
    desired: s.desired,
    generations: s.generations,
    running: s.running,
    observation: s.observation,
    settled: s.settled,
    membershipPending: s.membershipPending,
    now,
    ...(deps.resubmitAfterMs !== undefined ? { resubmitAfterMs: deps.resubmitAfterMs } : {}),
  });
  const inProgress = (st: RotationState | undefined) => st !== undefined && st.step !== 'Done';
  const record = (type: 'Normal' | 'Warning', reason: string, note: string) =>
    deps.recorder.record(lc, { type, reason, action: 'Rotate', note });
  switch (action.type) {
    case 'idle':
      return { state, active: false, message: undefined };
    case 'wait':
      return { state, active: inProgress(state), message: action.reason };
    case 'refuse': {
      await record('Warning', 'KeyRotationRefused', action.reason);
      const request = lc.metadata.annotations?.[ROTATE_KEY_ANNOTATION] ?? '';
      return {
        state: { request, step: 'Done', completed: [], refused: action.reason },
        active: false,
        message: action.reason,
      };
    }
    case 'newKey': {
      const pair = generateKeyPair();
      await createIfAbsent(ctx, RESOURCES.Secret, keySecret(lc, action.validator, pair, action.generation));
      await record(
        'Normal',
        'KeyRotationStarted',
        `Rotating ${action.validator}: new key ${pair.publicKey.slice(0, 12)}… (generation ${action.generation}); next: restart ${action.validator} with it, ADD it, REMOVE the old key`,
      );
      return { state: { ...action.state, newKey: pair.publicKey }, active: true, message: undefined };
    }
    case 'submit': {
      const what = `${action.change.action} of ${action.state.validator}'s ${action.change.action === 'ADD' ? 'new' : 'old'} key`;
      try {
        await submitChange(deps, lc, spec, action.via, action.change);
      } catch (err) {
        const message = `${what} through ${action.via} failed: ${err instanceof Error ? err.message.slice(0, 300) : 'error'}`;
        await record('Warning', 'KeyRotationFailed', message);
        return { state, active: true, message };
      }
      await record('Normal', 'KeyRotationSubmitted', `${what} submitted through ${action.via}`);
      return { state: action.state, active: true, message: undefined };
    }
    case 'advance':
      await record(
        'Normal',
        action.state.step === 'Done' || action.state.validator === undefined ? 'KeyRotated' : 'KeyRotationStep',
        action.note,
      );
      return { state: action.state, active: inProgress(action.state), message: undefined };
  }
}
