// The subscriber's rule for a silent subscription: one that has notified nothing since it was made, while changes on
// its broker were counted missed, is deleted and made again (the watcher told, to sweep); one that has notified
// before is kept however many changes are missed. The broker here is a map of subscriptions behind BrokerHttp's
// `send` (the protocol itself is tested against the test broker and Scorpio in the integration tests).
import { describe, expect, it } from 'vitest';
import type { BrokerEndpoint } from './endpoint.ts';
import type { BrokerHttp, BrokerResponse } from './http-client.ts';
import { Subscriber } from './subscriber.ts';

const endpoint: BrokerEndpoint = { url: 'http://broker.test', role: 'federated', api: 'ngsi-v2' };

function broker() {
  const subscriptions = new Map<string, unknown>();
  let next = 0;
  const answer = (status: number, headers: BrokerResponse['headers'] = {}): BrokerResponse => ({
    status,
    headers,
    body: Buffer.from(status === 200 ? '[]' : ''),
  });
  const http: BrokerHttp = {
    get: () => Promise.reject(new Error('not used')),
    async send(_broker, method, url, _headers, body) {
      const id = /\/v2\/subscriptions\/([^/?]+)/.exec(url)?.[1];
      if (method === 'POST') {
        const made = `s${++next}`;
        subscriptions.set(made, body);
        return answer(201, { location: `/v2/subscriptions/${made}` });
      }
      if (id === undefined) return answer(200); // the list of a previous run's
      if (!subscriptions.has(id)) return answer(404);
      if (method === 'DELETE') subscriptions.delete(id);
      return answer(method === 'GET' ? 200 : 204);
    },
    close: () => Promise.resolve(),
  };
  return { http, subscriptions };
}

/** The channel and secret the broker was given, from the subscription's notification URL and header. */
const channelOf = (body: unknown): { channel: string; token: string } => {
  const http = (body as { notification: { httpCustom: { url: string; headers: Record<string, string> } } }).notification
    .httpCustom;
  const channel = /\/watch\/notify\/([^/?]+)/.exec(http.url)?.[1] ?? '';
  return { channel, token: Object.values(http.headers)[0] ?? '' };
};

describe('Subscriber', () => {
  it('a subscription silent since it was made, while later changes were missed, is made again; one that notified is kept', async () => {
    const b = broker();
    const remade: string[] = [];
    const clock = { now: 1000 };
    const subscriber = new Subscriber([endpoint], b.http, {
      notifyUrl: 'http://node.test:8000',
      nodeKey: 'ab'.repeat(32),
      checkMs: 3_600_000,
      now: () => clock.now,
      onRecreated: (e) => remade.push(e.url),
    });
    await subscriber.check(); // checks run by hand (start() would run them every checkMs)
    const first = subscriber.status(endpoint.url)?.id as string;
    expect(b.subscriptions.has(first)).toBe(true);

    // Until a pass begun after it was made has ended, a missed change may predate it: no verdict.
    subscriber.changesMissed(endpoint.url, 1500);
    subscriber.passRead(2000, 3000);
    subscriber.changesMissed(endpoint.url, 2500); // found by that pass
    await subscriber.check();
    expect(subscriber.status(endpoint.url)?.id).toBe(first);

    clock.now = 4000;
    subscriber.changesMissed(endpoint.url, 3500); // found after it: silent since it was made
    await subscriber.check();
    const second = subscriber.status(endpoint.url)?.id as string;
    expect(second).not.toBe(first);
    expect(b.subscriptions.has(first)).toBe(false); // the silent one deleted
    expect(remade).toEqual([endpoint.url]);
    expect(subscriber.status(endpoint.url)).toMatchObject({ state: 'active', recreated: 1, createdAt: 4000 });

    // The new one starts its own wait; a notification on it, and missed changes are the broker losing some.
    subscriber.changesMissed(endpoint.url, 4500);
    await subscriber.check();
    expect(subscriber.status(endpoint.url)?.id).toBe(second);
    const { channel, token } = channelOf(b.subscriptions.get(second));
    expect(subscriber.authenticate(channel, 'not the secret')).toBeUndefined();
    expect(subscriber.authenticate(channel, token)).toBe(endpoint);
    subscriber.passRead(5000, 6000);
    subscriber.changesMissed(endpoint.url, 6500);
    subscriber.changesMissed(endpoint.url, 6600);
    await subscriber.check();
    expect(subscriber.status(endpoint.url)?.id).toBe(second);
    expect(remade).toEqual([endpoint.url]);
  });
});
