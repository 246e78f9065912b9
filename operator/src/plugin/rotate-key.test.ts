import { describe, expect, it } from 'vitest';
import type { LedgerCluster } from '../api/index.ts';
import { requestedValidators } from '../controllers/ledger-cluster/rotation-plan.ts';
import { identitySecret, rotationProgress, rotationRefusal, rotationRequest } from './rotate-key.ts';

const lc = (status: LedgerCluster['status']): LedgerCluster => ({
  apiVersion: 'scriptorium.dev/v1alpha1',
  kind: 'LedgerCluster',
  metadata: { name: 'ledger', namespace: 'chain' },
  spec: { image: 'x', validators: 4 },
  status,
});
const members = ['ledger-v0', 'ledger-v1'].map((name) => ({ name, role: 'validator' as const }));

describe('rotate-key', () => {
  it('asks with a new annotation value each time; the operator reads the names out of it', () => {
    const request = rotationRequest('ledger-v1', new Date('2026-11-27T10:00:00.123Z'));
    expect(request).toBe('ledger-v1@2026-11-27T10:00:00Z');
    expect(requestedValidators(request)).toEqual(['ledger-v1']);
    expect(requestedValidators('ledger-v0, ledger-v1@x')).toEqual(['ledger-v0', 'ledger-v1']);
  });

  it('refuses a name that is not an active validator, and a second rotation while one runs', () => {
    expect(rotationRefusal(lc({ members }), 'ledger-v9')).toMatch(/not an active validator/);
    expect(rotationRefusal(lc({ members }), 'ledger-v1')).toBeUndefined();
    const busy = lc({ members, keyRotation: { request: 'ledger-v0', validator: 'ledger-v0', step: 'Add' } });
    expect(rotationRefusal(busy, 'ledger-v1')).toMatch(/rotating ledger-v0's key \(step Add\)/);
  });

  it('follows the request it made, step by step, to done or refused', () => {
    const req = 'ledger-v1@t';
    expect(rotationProgress(lc({}), req)).toEqual({ line: 'waiting for the operator', done: false });
    expect(
      rotationProgress(lc({ keyRotation: { request: req, validator: 'ledger-v1', step: 'Restart' } }), req),
    ).toMatchObject({
      line: 'ledger-v1: Restart',
      done: false,
    });
    expect(
      rotationProgress(lc({ keyRotation: { request: req, step: 'Done', completed: ['ledger-v1'] } }), req),
    ).toEqual({
      line: 'done: ledger-v1 rotated',
      done: true,
    });
    expect(rotationProgress(lc({ keyRotation: { request: req, step: 'Done', refused: 'no' } }), req)).toMatchObject({
      done: true,
      failed: 'no',
    });
  });

  it('keys export: genesis and each validator key by index', () => {
    const s = identitySecret('ledger', 'chain', '{"g":1}', [
      { validator: 'ledger-v0', keyFile: '{"k":0}' },
      { validator: 'ledger-v3', keyFile: '{"k":3}' },
    ]);
    expect(s.metadata.name).toBe('ledger-identity');
    expect(Object.keys(s.data ?? {}).sort()).toEqual(['genesis.json', 'v0.json', 'v3.json']);
    expect(Buffer.from(s.data?.['v3.json'] ?? '', 'base64').toString()).toBe('{"k":3}');
  });
});
