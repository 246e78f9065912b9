import { describe, expect, it } from 'vitest';
import { ledgerClusterSpec } from './ledger-cluster.ts';
import { translationServiceSpec } from './translation-service.ts';

describe('TranslationService spec schema', () => {
  it('fills defaults on a minimal spec', () => {
    const spec = translationServiceSpec.parse({
      image: 'scriptorium/translation:1.0.0',
      database: { secretRef: { name: 'db-app', key: 'uri' } },
    });
    expect(spec.provider.kind).toBe('pseudo');
    expect(spec.schedules).toEqual({ worker: '* * * * *', retention: '17 3 * * *' });
    expect(spec.plans).toEqual([]);
  });

  it('refuses a bad schedule and a missing image', () => {
    expect(
      translationServiceSpec.safeParse({
        image: 'x',
        database: { secretRef: { name: 'a', key: 'b' } },
        schedules: { worker: 'nope' },
      }).success,
    ).toBe(false);
    expect(translationServiceSpec.safeParse({ database: { secretRef: { name: 'a', key: 'b' } } }).success).toBe(false);
  });
});

describe('LedgerCluster spec schema', () => {
  it('fills defaults', () => {
    const spec = ledgerClusterSpec.parse({ image: 'scriptorium/ledger-node:1', validators: 4 });
    expect(spec.tls.mode).toBe('server');
    expect(spec.retire).toEqual([]);
    expect(spec.consensus.blockIntervalMs).toBe(0);
  });

  it('refuses a malformed external validator key', () => {
    const result = ledgerClusterSpec.safeParse({
      image: 'x',
      validators: 1,
      externalValidators: [{ publicKey: 'zz', address: 'a:1' }],
    });
    expect(result.success).toBe(false);
  });
});
