import { describe, expect, it } from 'vitest';
import { fixture } from '../specs/ledger-cluster/fixtures.ts';
import { splitKubeOptions } from './cli.ts';
import { keysCreateArgs } from './keys.ts';
import { retireRefusal } from './retire.ts';
import { age, renderStatus } from './status.ts';

describe('kubectl scriptorium, pure parts', () => {
  it("takes kubectl's options out wherever they stand, in both spellings, and leaves the rest in order", () => {
    expect(
      splitKubeOptions([
        'keys',
        '-n',
        'shop',
        'create',
        '--context=prod',
        'web',
        '--user',
        'a@b.c',
        '--kubeconfig',
        'k',
      ]),
    ).toEqual({
      kube: { namespace: 'shop', context: 'prod', kubeconfig: 'k' },
      rest: ['keys', 'create', 'web', '--user', 'a@b.c'],
    });
    expect(() => splitKubeOptions(['status', '-n'])).toThrow('-n needs a value');
  });

  it('keys create runs the image CLI in the Deployment, with the arguments as given', () => {
    expect(keysCreateArgs('shop', 'web', ['--user', 'a@b.c'], { context: 'prod' })).toEqual([
      '--context',
      'prod',
      '-n',
      'shop',
      'exec',
      'deployment/web',
      '--',
      'node',
      'services/translation/src/main.ts',
      'keys',
      'create',
      '--user',
      'a@b.c',
    ]);
  });

  it('retire is refused for a non-member, a cluster whose quorum is at risk, and a stalled one', () => {
    const lc = fixture();
    const members = ['ledger-v0', 'ledger-v1'].map((name) => ({ name, role: 'validator' as const }));
    const cond = (type: string, status: 'True' | 'False', reason: string) => ({
      type,
      status,
      reason,
      message: 'm',
      lastTransitionTime: '2026-11-24T10:00:00Z',
    });
    expect(retireRefusal({ ...lc, status: { members } }, 'ledger-v9')).toMatch(/not a member/);
    expect(retireRefusal({ ...lc, status: { members } }, 'ledger-v1')).toBeUndefined();
    const atRisk = { members, conditions: [cond('Degraded', 'True', 'QuorumAtRisk')] };
    expect(retireRefusal({ ...lc, status: atRisk }, 'ledger-v1')).toMatch(/Degraded \(QuorumAtRisk/);
    const stalled = { members, conditions: [cond('Progressing', 'False', 'Stalled')] };
    expect(retireRefusal({ ...lc, status: stalled }, 'ledger-v1')).toMatch(/stalled/);
  });

  it('status shows ages as kubectl does and the latest Warning Events, newest first', () => {
    const now = new Date('2026-11-24T12:00:00Z');
    expect(age('2026-11-24T11:59:30Z', now)).toBe('30s');
    expect(age('2026-11-24T11:00:00Z', now)).toBe('60m');
    expect(age('2026-11-24T02:00:00Z', now)).toBe('10h');
    expect(age(undefined, now)).toBe('?');
    const event = (reason: string, at: string, type = 'Warning') => ({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      type,
      reason,
      note: `${reason} note`,
      eventTime: at,
      metadata: { name: reason },
    });
    const out = renderStatus(
      { ...fixture(), status: { height: 7, lastHeightChange: '2026-11-24T11:59:50Z', round: 5, pendingRecords: 12 } },
      [],
      [
        event('Stalled', '2026-11-24T11:58:00Z'),
        event('RoundChangeStorm', '2026-11-24T11:59:00Z'),
        event('Created', '2026-11-24T11:00:00Z', 'Normal'),
      ],
      now,
    );
    expect(out).toContain('height 7 (moved 10s ago) · round 5 · 12 records waiting');
    expect(out.split('RECENT WARNINGS\n')[1]?.split('\n').slice(0, 3)).toEqual([
      'AGE  REASON            NOTE',
      '60s  RoundChangeStorm  RoundChangeStorm note',
      '2m   Stalled           Stalled note',
    ]);
  });
});
