import { keyPairFromSeed } from '@scriptorium/ledger-protocol/keys';
import { type LedgerCluster, type LedgerClusterSpecInput, ledgerClusterSpec } from '../../api/index.ts';

/** A LedgerCluster as the API server would hand it to the operator (test fixture). */
export function fixture(spec: Partial<LedgerClusterSpecInput> = {}, name = 'ledger'): LedgerCluster {
  return {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'LedgerCluster',
    metadata: { name, namespace: 'chain', uid: '7a0c1a2e-0000-4000-8000-000000000002', generation: 1 },
    spec: { image: 'scriptorium/ledger-node:1.0.0', validators: 4, genesis: { chainId: 'test-1' }, ...spec },
  };
}

export function parsedSpec(lc: LedgerCluster) {
  return ledgerClusterSpec.parse(lc.spec);
}

/** Deterministic validator keys (seed i+1). */
export function testKey(i: number) {
  return keyPairFromSeed(new Uint8Array(32).fill(i + 1));
}

/** A cluster that watches brokers and notifies tampering on a webhook and syslog (with Secrets as files). */
export const watched = fixture({
  brokers: {
    primary: { name: 'orion', url: 'https://orion.city.example:1026' },
    federated: [
      { name: 'fed-a', url: 'https://fed-a.example:1026' },
      { name: 'fed-b', url: 'http://fed-b.example:1026/broker' },
    ],
    tenant: 'city',
    servicePath: '/north/#',
    caSecretRef: { name: 'broker-ca', key: 'ca.pem' },
    authTokenSecretRef: { name: 'pep', key: 'token' },
    pollIntervalSeconds: 5,
  },
  notifications: [
    {
      name: 'soc',
      url: 'https://soc.example/hooks/tamper',
      events: ['tamper'],
      secretRef: { name: 'hooks', key: 'hmac' },
    },
    { name: 'ops', url: 'https://ops.example/hook', events: ['stall'] },
    { name: 'siem', url: 'tcp://siem.example:6514' },
  ],
  consensus: { blockIntervalMs: 200, roundTimeoutBaseMs: 2000, maxRecordsPerBlock: 1000 },
});
