import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApiError } from '../src/errors.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { create, createNamespace, startTestbed, type Testbed, translationService } from './helpers.ts';

// The CRDs' own validation (OpenAPI schema and CEL rules) on a real kube-apiserver, without the operator.
let bed: Testbed;
let client: KubeClient;
let ns: string;

beforeAll(async () => {
  bed = await startTestbed({ withControllerManager: false });
  client = bed.client;
  ns = await createNamespace(client, 'crd');
});

afterAll(async () => {
  await bed?.stop();
});

async function refusal(obj: KubeObject): Promise<string> {
  try {
    await create(client, obj);
  } catch (err) {
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(422);
    return (err as KubeApiError).message;
  }
  throw new Error('the API server accepted an invalid object');
}

function ledger(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'LedgerCluster',
    metadata: { name, namespace: ns },
    spec: { image: 'scriptorium/ledger-node:1', validators: 4, ...spec },
  };
}

describe('TranslationService CRD', () => {
  it('refuses replicas together with autoscaling, with a readable message', async () => {
    const message = await refusal(translationService(ns, 'both', { replicas: 2, autoscaling: { maxReplicas: 4 } }));
    expect(message).toContain('set either replicas or autoscaling, not both');
  });

  it('refuses autoscaling bounds with min above max', async () => {
    const message = await refusal(
      translationService(ns, 'bounds', { replicas: undefined, autoscaling: { minReplicas: 5, maxReplicas: 2 } }),
    );
    expect(message).toContain('autoscaling.minReplicas must not exceed maxReplicas');
  });

  it('refuses a paid provider without an API key Secret', async () => {
    const message = await refusal(translationService(ns, 'nokey', { provider: { kind: 'openai' } }));
    expect(message).toContain('provider.apiKeySecretRef is required');
  });

  it('refuses a name too long for its children', async () => {
    const message = await refusal(translationService(ns, 'x'.repeat(50)));
    expect(message).toContain('metadata.name must be at most 42 characters');
  });

  it('refuses a trustProxy the image could not read, and one written as a number', async () => {
    expect(await refusal(translationService(ns, 'trust-bad', { trustProxy: '1; rm' }))).toContain('spec.trustProxy');
    expect(await refusal(translationService(ns, 'trust-int', { trustProxy: 2 }))).toContain('spec.trustProxy');
    const created = await create(client, translationService(ns, 'trust-ok', { trustProxy: '10.0.0.0/8, fd00::/8' }));
    expect(created.spec.trustProxy).toBe('10.0.0.0/8, fd00::/8');
  });

  it('accepts a valid spec and fills defaults', async () => {
    const created = await create(client, translationService(ns, 'ok', { schedules: undefined }));
    expect(created.spec.provider).toEqual({ kind: 'pseudo', models: {} });
    expect(created.spec.schedules).toEqual({ worker: '* * * * *', retention: '17 3 * * *' });
  });
});

describe('LedgerCluster CRD', () => {
  it('refuses zero validators', async () => {
    expect(await refusal(ledger('zero', { validators: 0 }))).toContain('validators must be at least 1');
  });

  it('requires a CA Secret or an issuer for mutual TLS', async () => {
    expect(await refusal(ledger('mtls', { tls: { mode: 'mutual' } }))).toContain(
      'tls.mode mutual requires tls.caSecretRef or tls.issuerRef',
    );
    await create(client, ledger('mtls-ok', { tls: { mode: 'mutual', caSecretRef: { name: 'ca' } } }));
  });

  it('witnesses: a threshold above their number, a key that is not a cosignature key, a joined genesis with a chain id', async () => {
    const key = 'witness.example/w1+0123abcd+BAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const one = [{ name: 'w1', url: 'https://w1.example', key }];
    expect(await refusal(ledger('wthreshold', { witnesses: one, witnessPolicy: { threshold: 2 } }))).toContain(
      'witnessPolicy.threshold is at most the number of witnesses',
    );
    expect(await refusal(ledger('wkey', { witnesses: [{ ...one[0], key: key.replace('+B', '+A') }] }))).toContain(
      'tlog-cosignature',
    );
    expect(
      await refusal(ledger('wfrom', { genesis: { chainId: 'x', from: { configMapRef: { name: 'g' } } } })),
    ).toContain('genesis.from takes the chain id and time from the published genesis');
    expect(
      await refusal(
        ledger('wboth', { genesis: { from: { configMapRef: { name: 'g' }, url: 'https://g.example/g' } } }),
      ),
    ).toContain('genesis.from names either configMapRef or url');
    await create(
      client,
      ledger('wok', {
        witnesses: one,
        witnessPolicy: { threshold: 1 },
        genesis: { from: { url: 'https://a.example/genesis.json' } },
      }),
    );
    const ok = await client.request<KubeObject>('GET', resourcePath(RESOURCES.LedgerCluster, ns, 'wok'));
    expect(ok.spec.witnessPolicy).toEqual({ threshold: 1, unwitnessedAfterSeconds: 120 });
    expect(ok.spec.checkpoints).toEqual({ intervalMs: 1000 });
  });

  it('keeps genesis immutable once set, and serves the scale subresource', async () => {
    await create(client, ledger('gen', { genesis: { chainId: 'chain-a' } }));
    const path = resourcePath(RESOURCES.LedgerCluster, ns, 'gen');
    const change = client.request('PATCH', path, {
      body: { spec: { genesis: { chainId: 'chain-b' } } },
      contentType: 'application/merge-patch+json',
    });
    await expect(change).rejects.toThrow(/genesis is immutable once set/);
    const scaled = await client.request<KubeObject>('PATCH', `${path}/scale`, {
      body: { spec: { replicas: 7 } },
      contentType: 'application/merge-patch+json',
    });
    expect(scaled.kind).toBe('Scale');
    const after = await client.request<KubeObject>('GET', path);
    expect(after.spec.validators).toBe(7);
    expect(after.spec.genesis).toEqual({ chainId: 'chain-a' });
  });

  it('refuses a service path with NGSI-LD, a second syslog sink, and two webhook signing secrets', async () => {
    const primary = { name: 'orion', url: 'https://orion.example:1026' };
    expect(await refusal(ledger('ld-path', { brokers: { primary, api: 'ngsi-ld', servicePath: '/city' } }))).toContain(
      'brokers.servicePath is for NGSI-v2 only',
    );
    expect(
      await refusal(
        ledger('two-syslog', {
          notifications: [
            { name: 'a', url: 'udp://siem-a:514' },
            { name: 'b', url: 'tcp://siem-b:6514' },
          ],
        }),
      ),
    ).toContain('at most one syslog sink');
    expect(
      await refusal(
        ledger('two-secrets', {
          notifications: [
            { name: 'a', url: 'https://a/hook', secretRef: { name: 's1', key: 'k' } },
            { name: 'b', url: 'https://b/hook', secretRef: { name: 's2', key: 'k' } },
          ],
        }),
      ),
    ).toContain('every webhook signs with the same secretRef');
    expect(await refusal(ledger('bad-url', { notifications: [{ name: 'a', url: 'mailto:soc@example' }] }))).toContain(
      'spec.notifications[0].url',
    );
    expect(
      await refusal(ledger('creds', { brokers: { primary: { name: 'p', url: 'https://user:pw@orion:1026' } } })),
    ).toContain('spec.brokers.primary.url');
  });

  it('accepts brokers and tamper sinks, filling defaults', async () => {
    const created = await create(
      client,
      ledger('watching', {
        brokers: {
          primary: { name: 'orion', url: 'https://orion.example:1026' },
          federated: [{ name: 'fed', url: 'https://fed.example:1026' }],
          tenant: 'city',
          caSecretRef: { name: 'broker-ca', key: 'ca.pem' },
        },
        notifications: [
          { name: 'soc', url: 'https://soc.example/hook', events: ['tamper'], secretRef: { name: 'h', key: 'k' } },
          { name: 'siem', url: 'udp://siem.example:514', events: ['tamper'] },
        ],
      }),
    );
    expect(created.spec.brokers).toMatchObject({ api: 'ngsi-v2', pollIntervalSeconds: 10 });
    expect(created.spec.consensus.blockIntervalMs).toBe(0);
  });
});
