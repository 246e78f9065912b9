import type { Condition } from '../api/index.ts';

export interface ConditionInput {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/**
 * Set one condition. `lastTransitionTime` changes only when the status changes, so writing the same
 * condition twice leaves the status byte-for-byte equal (and the write is skipped).
 */
export function setCondition(
  conditions: Condition[] | undefined,
  input: ConditionInput,
  generation: number | undefined,
  now: () => Date = () => new Date(),
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === input.type);
  const old = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime:
      old && old.status === input.status
        ? old.lastTransitionTime
        : now()
            .toISOString()
            .replace(/\.\d{3}Z$/, 'Z'),
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

export function getCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * `Ready` is derived, never set by hand: True only when `Degraded` is False and `Progressing` is False;
 * otherwise False with the reason of whichever blocks it (Degraded first), Unknown while either is unknown.
 */
export function deriveReady(conditions: Condition[] | undefined): ConditionInput {
  const degraded = getCondition(conditions, 'Degraded');
  const progressing = getCondition(conditions, 'Progressing');
  if (degraded?.status === 'True')
    return { type: 'Ready', status: 'False', reason: degraded.reason, message: degraded.message };
  if (progressing?.status === 'True') {
    return { type: 'Ready', status: 'False', reason: progressing.reason, message: progressing.message };
  }
  if (!degraded || !progressing || degraded.status === 'Unknown' || progressing.status === 'Unknown') {
    return { type: 'Ready', status: 'Unknown', reason: 'Reconciling', message: 'Not reconciled yet' };
  }
  return { type: 'Ready', status: 'True', reason: 'Available', message: progressing.message };
}

/** Sort conditions into a fixed order (Ready, Progressing, Degraded, then the rest) so equal sets compare equal. */
export function orderConditions(conditions: Condition[]): Condition[] {
  const rank = (t: string) => {
    const i = ['Ready', 'Progressing', 'Degraded'].indexOf(t);
    return i < 0 ? 99 : i;
  };
  return [...conditions].sort((a, b) => rank(a.type) - rank(b.type) || a.type.localeCompare(b.type));
}
