import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../kube/types.ts';
import { deriveReady, setCondition } from './conditions.ts';
import { nextStatus } from './status-writer.ts';

const t0 = () => new Date('2026-01-01T00:00:00.000Z');
const t1 = () => new Date('2026-01-01T00:05:00.000Z');

describe('conditions', () => {
  it('keeps lastTransitionTime while the status stays the same', () => {
    const a = setCondition(undefined, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' }, 1, t0);
    const b = setCondition(a, { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'x' }, 2, t1);
    expect(b[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    expect(b[0]?.observedGeneration).toBe(2);
    const c = setCondition(b, { type: 'Degraded', status: 'True', reason: 'SecretNotFound', message: 'x' }, 2, t1);
    expect(c[0]?.lastTransitionTime).toBe('2026-01-01T00:05:00Z');
  });

  it('derives Ready from Degraded and Progressing', () => {
    const set = (degraded: 'True' | 'False', progressing: 'True' | 'False') =>
      setCondition(
        setCondition(undefined, { type: 'Degraded', status: degraded, reason: 'D', message: 'd' }, 1, t0),
        { type: 'Progressing', status: progressing, reason: 'P', message: 'p' },
        1,
        t0,
      );
    expect(deriveReady(set('False', 'False'))).toMatchObject({ status: 'True', reason: 'Available' });
    expect(deriveReady(set('True', 'True'))).toMatchObject({ status: 'False', reason: 'D' });
    expect(deriveReady(set('False', 'True'))).toMatchObject({ status: 'False', reason: 'P' });
    expect(deriveReady(undefined)).toMatchObject({ status: 'Unknown' });
  });
});

describe('nextStatus', () => {
  const obj: KubeObject = { apiVersion: 'v', kind: 'K', metadata: { name: 'a', generation: 3 } };
  const mutate = (s: Record<string, unknown>) => ({
    ...s,
    observedGeneration: 3,
    conditions: setCondition(
      setCondition(
        s.conditions as never,
        { type: 'Degraded', status: 'False', reason: 'AsExpected', message: '' },
        3,
        t0,
      ),
      { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: 'done' },
      3,
      t0,
    ),
  });

  it('reports a change, then none when the same mutation runs on its own result', () => {
    const first = nextStatus(obj, mutate, t0);
    expect(first.changed).toBe(true);
    expect(first.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Ready', 'Progressing', 'Degraded']);
    const second = nextStatus({ ...obj, status: first.status }, mutate, t1);
    expect(second.changed).toBe(false);
  });
});
