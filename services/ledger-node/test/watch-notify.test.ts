// The notification route, the part of a subscribing node that faces the network, on a real node process: a request
// is taken only on the channel of one of the node's subscriptions with that subscription's secret (the header the
// broker was given), a wrong or missing secret is 401 whatever the channel, a body that is no notification is 400;
// refused requests take from their source's rate limit, genuine ones never; fuzzed with arbitrary channels, headers
// and bodies it answers only those statuses and keeps working. Over TLS when the node serves TLS: the broker
// notifies at an https URL and trusts the cluster's CA.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { BrokerWrites, startTestBroker, type TestBroker } from '@scriptorium/harness/test-broker';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFY_TOKEN_HEADER } from '../src/broker/notification.ts';
import { sleep, until } from './helpers.ts';
import { createTestPki, type TestPki } from './tls-certs.ts';

interface Channel {
  url: string;
  token: string;
}

/** This node's subscription on a broker, as anyone who may read the broker's subscriptions sees it. */
async function channelOn(broker: TestBroker): Promise<Channel | undefined> {
  const res = await fetch(`${broker.url}/v2/subscriptions`);
  const subs = (await res.json()) as Array<{
    notification: { httpCustom: { url: string; headers: Record<string, string> } };
  }>;
  const custom = subs[0]?.notification.httpCustom;
  return custom ? { url: custom.url, token: custom.headers[NOTIFY_TOKEN_HEADER] as string } : undefined;
}

const notification = (id = 'urn:ngsi-ld:Sensor:000001') => ({ subscriptionId: 'x', data: [{ id, type: 'Sensor' }] });

describe('the notification route of a subscribing node', { timeout: 180_000 }, () => {
  let cluster: LocalCluster;
  let brokers: TestBroker[];
  let channel: Channel;
  let node: LocalNode;
  const agent = new Agent({ connections: 16 });

  const post = async (url: string, headers: Record<string, string>, body: string) => {
    const res = await request(url, { method: 'POST', headers, body, dispatcher: agent });
    await res.body.dump();
    return res.statusCode;
  };

  beforeAll(async () => {
    brokers = [await startTestBroker(), await startTestBroker(), await startTestBroker()];
    for (const b of brokers) await new BrokerWrites(b.url, 'ngsi-v2').seed(5, 2);
    cluster = await LocalCluster.create({
      size: 1,
      env: {
        NODE_BROKER__PRIMARY_URL: (brokers[0] as TestBroker).url,
        NODE_BROKER__FEDERATED_URLS: `${(brokers[1] as TestBroker).url},${(brokers[2] as TestBroker).url}`,
        NODE_BROKER__MODE: 'subscribe',
        NODE_BROKER__SUBSCRIPTION_CHECK_MS: '500',
        NODE_RATE_LIMIT__RPS: '5',
        NODE_RATE_LIMIT__BURST: '10',
      },
    });
    await cluster.startAll();
    node = cluster.nodes[0] as LocalNode;
    channel = await until('the subscription', () => channelOn(brokers[1] as TestBroker));
  });
  afterAll(async () => {
    await cluster?.stopAll();
    for (const b of brokers ?? []) await b.close();
    await agent.close();
  });

  it('takes a notification on its channel with its secret; 401 for a wrong, missing or other channel’s secret', async () => {
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify(notification());
    expect(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: channel.token }, body)).toBe(204);
    expect(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: `${channel.token}x` }, body)).toBe(401);
    expect(await post(channel.url, json, body)).toBe(401);
    const other = (await channelOn(brokers[2] as TestBroker)) as Channel;
    expect(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: other.token }, body)).toBe(401);
    expect(
      await post(`${node.url}/watch/notify/nochannel`, { ...json, [NOTIFY_TOKEN_HEADER]: channel.token }, body),
    ).toBe(401);
    // With its secret, a body that is no notification of that API is refused.
    expect(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: channel.token }, '{"data": 7}')).toBe(400);
    expect(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: channel.token }, 'not json')).toBe(400);
  });

  it('refused requests use up their source’s rate limit; a broker’s genuine burst is never throttled', async () => {
    await sleep(2500); // the bucket refills (5 a second, 10 at most)
    const json = { 'content-type': 'application/json' };
    const genuine = await Promise.all(
      Array.from({ length: 60 }, (_, k) =>
        post(
          channel.url,
          { ...json, [NOTIFY_TOKEN_HEADER]: channel.token },
          JSON.stringify(notification(`urn:x:${k}`)),
        ),
      ),
    );
    expect(new Set(genuine)).toEqual(new Set([204]));
    const forged: number[] = [];
    for (let k = 0; k < 20; k++)
      forged.push(await post(channel.url, { ...json, [NOTIFY_TOKEN_HEADER]: 'guess' }, JSON.stringify(notification())));
    expect(forged.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(forged.slice(-5)).toEqual([429, 429, 429, 429, 429]);
  });

  it('fuzz: arbitrary channels, secrets, content types and bodies get 204, 400, 401, 404, 413, 415 or 429, never 5xx', async () => {
    await sleep(2500);
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constant(channel.url),
          fc.string({ maxLength: 80 }).map((c) => `${node.url}/watch/notify/${encodeURIComponent(c)}`),
        ),
        fc.oneof(fc.constant(channel.token), fc.string({ maxLength: 64 }), fc.constant(undefined)),
        fc.constantFrom('application/json', 'application/ld+json', 'text/plain', 'application/json; charset=utf-8'),
        fc.oneof(
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.string(),
          fc
            .record({
              subscriptionId: fc.string(),
              type: fc.constantFrom('Notification', undefined),
              data: fc.array(
                fc.record({
                  id: fc.oneof(fc.string(), fc.integer()),
                  type: fc.oneof(fc.string(), fc.array(fc.string())),
                }),
                { maxLength: 4 },
              ),
            })
            .map((v) => JSON.stringify(v)),
        ),
        async (url, token, contentType, body) => {
          const headers: Record<string, string> = { 'content-type': contentType };
          if (token !== undefined) headers[NOTIFY_TOKEN_HEADER] = token;
          const status = await post(url, headers, body);
          seen.add(status);
          expect([204, 400, 401, 404, 413, 415, 429]).toContain(status);
        },
      ),
      { numRuns: 300, seed: 9 },
    );
    expect(seen.has(204) || seen.has(400)).toBe(true);
    await sleep(2500); // the refused requests emptied this source's bucket (the brokers share its address here)
    expect((await cluster.get(node, '/health')).status).toBe(200);
    // And it still judges what its brokers notify.
    await new BrokerWrites((brokers[1] as TestBroker).url, 'ngsi-v2').set(3, 0, -33);
    await until('the record of a change notified after the fuzzing', async () => {
      const height = await cluster.height(node);
      for (let h = height; h > 0; h--) {
        const block = (await cluster.get(node, `/blocks/${h}`)).body as {
          records: Array<{ entity?: string; verdict?: string }>;
        };
        if (block.records.some((r) => r.entity === 'urn:ngsi-ld:Sensor:000003' && r.verdict === 'TAMPERED'))
          return true;
      }
      return false;
    });
  });
});

describe('notifications over TLS', { timeout: 180_000 }, () => {
  let dir: string;
  let pki: TestPki;
  let cluster: LocalCluster;
  let brokers: TestBroker[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ledger-notify-tls-'));
    pki = createTestPki(dir);
    brokers = [];
    for (let k = 0; k < 3; k++) brokers.push(await startTestBroker({ api: 'ngsi-ld', notifyCa: pki.ca }));
    for (const b of brokers) await new BrokerWrites(b.url, 'ngsi-ld').seed(5, 2);
    cluster = await LocalCluster.create({
      size: 1,
      tls: {
        mode: 'mutual',
        caFile: pki.caFile,
        ca: pki.ca,
        certFor: () => ({ certFile: pki.certFile, keyFile: pki.keyFile }),
        client: { cert: pki.cert, key: pki.key },
      },
      env: {
        NODE_BROKER__PRIMARY_URL: (brokers[0] as TestBroker).url,
        NODE_BROKER__FEDERATED_URLS: `${(brokers[1] as TestBroker).url},${(brokers[2] as TestBroker).url}`,
        NODE_BROKER__API: 'ngsi-ld',
        NODE_BROKER__MODE: 'subscribe',
        NODE_BROKER__SUBSCRIPTION_CHECK_MS: '500',
      },
    });
    await cluster.startAll();
  });
  afterAll(async () => {
    await cluster?.stopAll();
    for (const b of brokers ?? []) await b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a node serving mutual TLS is notified at an https URL (no client certificate needed there) and judges at once', async () => {
    const node = cluster.nodes[0] as LocalNode;
    const sub = await until('the subscription', async () => {
      const res = await fetch(`${(brokers[1] as TestBroker).url}/ngsi-ld/v1/subscriptions/`);
      const subs = (await res.json()) as Array<{ notification: { endpoint: { uri: string } } }>;
      return subs[0];
    });
    expect(sub.notification.endpoint.uri.startsWith(`${node.url}/watch/notify/`)).toBe(true);
    expect(node.url.startsWith('https://')).toBe(true);
    await new BrokerWrites((brokers[1] as TestBroker).url, 'ngsi-ld').set(2, 0, -22);
    await until('the TAMPERED record', async () => {
      const height = await cluster.height(node);
      for (let h = height; h > 0; h--) {
        const block = (await cluster.get(node, `/blocks/${h}`)).body as {
          records: Array<{ entity?: string; verdict?: string }>;
        };
        if (block.records.some((r) => r.entity === 'urn:ngsi-ld:Sensor:000002' && r.verdict === 'TAMPERED'))
          return true;
      }
      return false;
    });
    const watch = (await cluster.get(node, '/watch')).body as { watcher: { notified: { received: number } } };
    expect(watch.watcher.notified.received).toBeGreaterThan(0);
  });
});
