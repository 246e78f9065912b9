// The watcher and notification settings the operator gives every validator: names the node defines,
// Secrets as files (only the referenced key), nothing secret in a value, and sinks filtered by event.
import { describe, expect, it } from 'vitest';
import { fixture, parsedSpec, watched } from './fixtures.ts';
import { validatorEnv, validatorStatefulSet } from './statefulset.ts';
import { watchEnv } from './watch.ts';

describe('watcher and notification settings', () => {
  it('become node settings: brokers, tenant, poll interval, tamper sinks, block interval', () => {
    const env = Object.fromEntries(watchEnv(parsedSpec(watched)).map((e) => [e.name, e.value]));
    expect(env).toEqual({
      NODE_CONSENSUS__BLOCK_DELAY_MS: '200',
      NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: '60000',
      NODE_BROKER__PRIMARY_URL: 'https://orion.city.example:1026',
      NODE_BROKER__FEDERATED_URLS: 'https://fed-a.example:1026,http://fed-b.example:1026/broker',
      NODE_BROKER__API: 'ngsi-v2',
      NODE_BROKER__SERVICE: 'city',
      NODE_BROKER__SERVICE_PATH: '/north/#',
      NODE_BROKER__POLL_INTERVAL_MS: '5000',
      NODE_BROKER__MODE: 'poll',
      NODE_BROKER__TLS_CA_FILE: '/etc/ledger-node/broker-ca/ca.pem',
      NODE_BROKER__AUTH_TOKEN_FILE: '/etc/ledger-node/broker-token/token',
      NODE_NOTIFY__WEBHOOK_URLS: 'https://soc.example/hooks/tamper',
      NODE_NOTIFY__WEBHOOK_SECRET_FILE: '/etc/ledger-node/webhook-secret/hmac',
      NODE_NOTIFY__SYSLOG: 'tcp://siem.example:6514',
    });
  });

  it('subscribe mode: the mode and the sweep interval; brokers notify each validator at its advertised address', () => {
    const subscribing = fixture({
      ...watched.spec,
      brokers: { ...watched.spec.brokers!, mode: 'subscribe', sweepIntervalSeconds: 300 },
    });
    const env = Object.fromEntries(watchEnv(parsedSpec(subscribing)).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ NODE_BROKER__MODE: 'subscribe', NODE_BROKER__SWEEP_INTERVAL_MS: '300000' });
    expect(env.NODE_BROKER__NOTIFY_URL).toBeUndefined();
  });

  it('mount each referenced Secret key read-only as a file, and nothing else', () => {
    const sts = validatorStatefulSet(watched, parsedSpec(watched), 'ledger-v0');
    const pod = sts.spec.template.spec;
    const byName = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]));
    expect(byName['broker-ca']).toEqual({
      name: 'broker-ca',
      secret: { secretName: 'broker-ca', defaultMode: 0o440, items: [{ key: 'ca.pem', path: 'ca.pem' }] },
    });
    expect(byName['broker-token'].secret.items).toEqual([{ key: 'token', path: 'token' }]);
    expect(byName['webhook-secret'].secret).toMatchObject({
      secretName: 'hooks',
      items: [{ key: 'hmac', path: 'hmac' }],
    });
    const mounts = pod.containers[0].volumeMounts.filter((m: { name: string }) =>
      ['broker-ca', 'broker-token', 'webhook-secret'].includes(m.name),
    );
    expect(mounts.every((m: { readOnly: boolean }) => m.readOnly)).toBe(true);
    const env = validatorEnv(watched, parsedSpec(watched), 'ledger-v0');
    expect(env.filter((e) => /TOKEN|SECRET/.test(e.name)).every((e) => e.value?.startsWith('/etc/ledger-node/'))).toBe(
      true,
    );
  });

  it('no brokers and no tamper sinks: no watcher settings, only the empty-block interval', () => {
    const env = watchEnv(
      parsedSpec(fixture({ notifications: [{ name: 'ops', url: 'https://ops/x', events: ['stall'] }] })),
    );
    expect(env).toEqual([{ name: 'NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS', value: '60000' }]);
  });

  it('a change to them changes the StatefulSet template (which rolls validators one at a time)', () => {
    const before = validatorStatefulSet(watched, parsedSpec(watched), 'ledger-v1');
    const changed = fixture({ ...watched.spec, brokers: { ...watched.spec.brokers!, pollIntervalSeconds: 30 } });
    const after = validatorStatefulSet(changed, parsedSpec(changed), 'ledger-v1');
    expect(after.spec.template).not.toEqual(before.spec.template);
  });
});
