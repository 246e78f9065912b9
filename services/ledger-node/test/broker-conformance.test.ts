// The NGSI-LD test broker against the real thing: the same requests, in the same order, to a FIWARE Scorpio 5.0.3
// (built by tools/scorpio, on its own PostgreSQL) and to the test broker, in the default tenant and a named one; every
// answer must agree (status, problem type, count header, body once the broker's own ids and times are set aside),
// and so must the notifications each sends for the same changes. This is how the disagreements listed in
// docs/ledger-watch.md were found; it keeps them fixed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestBroker, type TestBroker } from '@scriptorium/harness/test-broker';
import { ensureScorpioJar, startScorpio, type TestScorpio } from '@scriptorium/test-support/scorpio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sleep } from './helpers.ts';

const found = ensureScorpioJar();
const skip = 'skip' in found ? found.skip : undefined;
const LINK =
  '<https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"';

interface Answer {
  status: number;
  count: string | null;
  contentType: string | null;
  body: unknown;
}

interface Step {
  name: string;
  /** Wait this long after the answer (Scorpio builds a notification after answering, from its database). */
  pauseMs?: number;
  method?: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * The parts of an answer both brokers must agree on: their own ids and times are set aside, and object members are
 * sorted (member order carries no meaning in JSON; Scorpio lists an entity's attributes in name order, which the
 * test broker does too).
 */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (['notifiedAt', 'deletedAt', 'lastNotification', 'lastSuccess', 'lastFailure', 'jsonldContext'].includes(k))
      out[k] = typeof v;
    else if (
      k === 'id' &&
      typeof v === 'string' &&
      /^(urn:[0-9a-f-]{36}|notification:|urn:ngsi-ld:EntityTypeList:)/.test(v)
    )
      out[k] = 'generated';
    else if (k === 'subscriptionId') out[k] = 'generated';
    else if (k === 'uri' && typeof v === 'string') out[k] = v.replace(/^http:\/\/127\.0\.0\.1:\d+/, 'receiver');
    else if (k === 'detail' || k === 'title')
      continue; // wording; the problem type and status are the contract
    else out[k] = normalize(v);
  }
  return out;
}

async function ask(base: string, step: Step, tenant: string | undefined): Promise<Answer> {
  const headers: Record<string, string> = { Accept: 'application/json', Link: LINK, ...step.headers };
  if (tenant) headers['NGSILD-Tenant'] = tenant;
  if (step.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${step.path}`, {
    method: step.method ?? 'GET',
    headers,
    ...(step.body !== undefined ? { body: JSON.stringify(step.body) } : {}),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text === '' ? '' : JSON.parse(text);
  } catch {
    // kept as text
  }
  const contentType = res.headers.get('content-type');
  return { status: res.status, count: res.headers.get('ngsild-results-count'), contentType, body: normalize(body) };
}

const sensor = (n: number, value: number) => ({
  id: `urn:ngsi-ld:Sensor:${n}`,
  type: 'Sensor',
  temperature: { type: 'Property', value },
  site: { type: 'Relationship', object: `urn:ngsi-ld:Site:${n}` },
});
const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
const past = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

/** The requests, in order: writes, then every listing form the watcher or a user might send, then subscriptions. */
function steps(receiver: string): Step[] {
  const sub = (name: string, extra: Record<string, unknown>) => ({
    type: 'Subscription',
    description: name,
    notification: {
      format: 'normalized',
      endpoint: {
        uri: `${receiver}/${name}`,
        accept: 'application/json',
        receiverInfo: [{ key: 'X-Secret', value: 's3' }],
      },
    },
    ...extra,
  });
  const E = '/ngsi-ld/v1/entities';
  const R = '/ngsi-ld/v1/csourceRegistrations';
  return [
    { name: 'create', method: 'POST', path: E, body: sensor(1, 21.5) },
    {
      name: 'create a multi-typed entity',
      method: 'POST',
      path: E,
      body: { ...sensor(2, 22), type: ['Sensor', 'Device'] },
    },
    { name: 'create a duplicate', method: 'POST', path: E, body: sensor(1, 0) },
    {
      name: 'create with an unknown attribute type',
      method: 'POST',
      path: E,
      body: { id: 'urn:x:1', type: 'X', a: { type: 'Weird', value: 1 } },
    },
    { name: 'create with an id that is no URI', method: 'POST', path: E, body: { id: 'nouri', type: 'X' } },
    { name: 'listing with no filter', path: `${E}?limit=1000&count=true` },
    { name: 'listing by idPattern alone', path: `${E}?idPattern=.*&limit=1000&offset=0&count=true` },
    { name: 'listing with local=true alone', path: `${E}?local=true&count=true` },
    { name: 'listing with localOnly=true', path: `${E}?type=Sensor&localOnly=true&count=true` },
    { name: 'listing by type', path: `${E}?type=Sensor&limit=1000&offset=0&count=true` },
    { name: 'listing by the second type of a multi-typed entity', path: `${E}?type=Device&count=true` },
    { name: 'listing by two types', path: `${E}?type=Device,Sensor&count=true` },
    { name: 'listing by type with local=true (ignored)', path: `${E}?type=Sensor&local=true&count=true` },
    { name: 'listing by type and idPattern', path: `${E}?type=Sensor&idPattern=.*2$&count=true` },
    { name: 'listing by attrs', path: `${E}?attrs=temperature&count=true` },
    { name: 'listing by q', path: `${E}?q=temperature%3E22&count=true` },
    { name: 'listing by id', path: `${E}?id=urn:ngsi-ld:Sensor:2,urn:ngsi-ld:Sensor:1&count=true` },
    { name: 'listing modified since an hour ago', path: `${E}?type=Sensor&q=modifiedAt%3E%22${past}%22&count=true` },
    {
      name: 'listing modified after an hour from now',
      path: `${E}?type=Sensor&q=modifiedAt%3E%22${future}%22&count=true`,
    },
    { name: 'limit 0 with count', path: `${E}?type=Sensor&limit=0&count=true` },
    { name: 'limit 0 without count', path: `${E}?type=Sensor&limit=0` },
    { name: 'limit above 1000', path: `${E}?type=Sensor&limit=1001&count=true` },
    { name: 'limit not a number', path: `${E}?type=Sensor&limit=abc` },
    { name: 'offset past the end', path: `${E}?type=Sensor&offset=5&count=true` },
    { name: 'page of one', path: `${E}?type=Sensor&limit=1&offset=1&count=true` },
    { name: 'an unknown type', path: `${E}?type=Nothing&count=true` },
    { name: 'the entity types', path: '/ngsi-ld/v1/types' },
    { name: 'the entity types in detail', path: '/ngsi-ld/v1/types?details=true' },
    { name: 'one entity', path: `${E}/urn:ngsi-ld:Sensor:2` },
    { name: 'a missing entity', path: `${E}/urn:ngsi-ld:Sensor:9` },
    {
      name: 'update an attribute it lacks',
      method: 'PATCH',
      path: `${E}/urn:ngsi-ld:Sensor:1/attrs`,
      body: { nosuch: { type: 'Property', value: 1 } },
    },
    { name: 'after the update of a lacking attribute', path: `${E}/urn:ngsi-ld:Sensor:1` },
    {
      name: 'update an attribute',
      method: 'PATCH',
      path: `${E}/urn:ngsi-ld:Sensor:1/attrs`,
      body: { temperature: { type: 'Property', value: 30 } },
    },
    {
      name: 'append an attribute',
      method: 'POST',
      path: `${E}/urn:ngsi-ld:Sensor:1/attrs`,
      body: { humidity: { type: 'Property', value: 40 } },
    },
    { name: 'attributes in name order', path: `${E}/urn:ngsi-ld:Sensor:1` },
    { name: 'delete a missing attribute', method: 'DELETE', path: `${E}/urn:ngsi-ld:Sensor:1/attrs/nosuch` },
    { name: 'delete an attribute', method: 'DELETE', path: `${E}/urn:ngsi-ld:Sensor:1/attrs/humidity` },
    {
      name: 'batch upsert (replace)',
      method: 'POST',
      path: '/ngsi-ld/v1/entityOperations/upsert',
      body: [
        { id: 'urn:ngsi-ld:Sensor:2', type: ['Sensor', 'Device'], temperature: { type: 'Property', value: 5 } },
        sensor(3, 3),
      ],
    },
    {
      name: 'batch upsert (update)',
      method: 'POST',
      path: '/ngsi-ld/v1/entityOperations/upsert?options=update',
      body: [{ id: 'urn:ngsi-ld:Sensor:3', type: 'Sensor', extra: { type: 'Property', value: 'x' } }],
    },
    { name: 'after the upserts', path: `${E}?type=Sensor&count=true` },
    {
      name: 'subscribe without a type',
      method: 'POST',
      path: '/ngsi-ld/v1/subscriptions/',
      body: sub('notype', { entities: [{ idPattern: '.*' }] }),
    },
    {
      name: 'subscribe by type',
      method: 'POST',
      path: '/ngsi-ld/v1/subscriptions/',
      body: sub('bytype', {
        id: 'urn:ngsi-ld:Subscription:bytype',
        entities: [{ type: 'Sensor' }],
        expiresAt: '2040-01-01T00:00:00Z',
      }),
    },
    {
      name: 'subscribe to deletions too',
      method: 'POST',
      path: '/ngsi-ld/v1/subscriptions/',
      body: sub('all', {
        id: 'urn:ngsi-ld:Subscription:all',
        entities: [{ type: 'Sensor' }, { type: 'Device' }],
        notificationTrigger: [
          'entityCreated',
          'entityUpdated',
          'entityDeleted',
          'attributeCreated',
          'attributeUpdated',
          'attributeDeleted',
        ],
      }),
    },
    {
      name: 'subscribe with a bad trigger',
      method: 'POST',
      path: '/ngsi-ld/v1/subscriptions/',
      body: sub('bad', { entities: [{ type: 'Sensor' }], notificationTrigger: ['nonsense'] }),
    },
    { name: 'one subscription', path: '/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:bytype' },
    { name: 'a missing subscription', path: '/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:nosuch' },
    {
      name: 'renew a subscription',
      method: 'PATCH',
      path: '/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:bytype',
      body: { expiresAt: '2041-01-01T00:00:00Z' },
    },
    {
      name: 'change an entity (notified)',
      method: 'PATCH',
      path: `${E}/urn:ngsi-ld:Sensor:1/attrs`,
      body: { temperature: { type: 'Property', value: 31 } },
    },
    { name: 'create an entity (notified)', method: 'POST', path: E, body: sensor(4, 4), pauseMs: 2000 },
    { name: 'delete an entity (notified when asked)', method: 'DELETE', path: `${E}/urn:ngsi-ld:Sensor:4` },
    { name: 'delete a subscription', method: 'DELETE', path: '/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:all' },
    { name: 'the subscription deleted', path: '/ngsi-ld/v1/subscriptions/urn:ngsi-ld:Subscription:all' },
    { name: 'an unknown tenant', path: `${E}?type=Sensor&count=true`, headers: { 'NGSILD-Tenant': 'nosuchtenant' } },
    // Context source registrations (the primary's scope), last: one registered for Sensor makes Scorpio forward.
    { name: 'registrations with no filter', path: `${R}?count=true&limit=1` },
    { name: 'registrations by type, none', path: `${R}?type=Sensor&count=true&limit=1` },
    {
      name: 'registrations of an unknown tenant',
      path: `${R}?type=Sensor&count=true&limit=1`,
      headers: { 'NGSILD-Tenant': 'nosuchtenant' },
    },
    {
      name: 'register a context source',
      method: 'POST',
      path: `${R}/`,
      body: {
        id: 'urn:ngsi-ld:ContextSourceRegistration:elsewhere',
        type: 'ContextSourceRegistration',
        information: [{ entities: [{ type: 'Sensor' }] }],
        endpoint: 'http://127.0.0.1:9/elsewhere',
      },
    },
    { name: 'registrations counted at limit 0 (always 0)', path: `${R}?type=Sensor&count=true&limit=0` },
    { name: 'registrations by type', path: `${R}?type=Sensor&count=true&limit=1` },
    { name: 'registrations by two types', path: `${R}?type=Device,Sensor&count=true&limit=1` },
    { name: 'registrations by another type', path: `${R}?type=Device&count=true&limit=1` },
    { name: 'registrations above the limit', path: `${R}?type=Sensor&count=true&limit=1001` },
    {
      name: 'delete the registration',
      method: 'DELETE',
      path: `${R}/urn:ngsi-ld:ContextSourceRegistration:elsewhere`,
    },
    { name: 'registrations after the deletion', path: `${R}?type=Sensor&count=true&limit=1` },
  ];
}

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

describe.skipIf(skip !== undefined)(
  `the NGSI-LD test broker answers as Scorpio 5.0.3 does${skip ? ` (skipped: ${skip})` : ''}`,
  { timeout: 120_000 },
  () => {
    let scorpio: TestScorpio;
    let broker: TestBroker;
    // One receiver each: the subscriptions are the same but for the receiver's port, which answers are compared without.
    const receivers: Array<{ server: Server; url: string; received: Received[] }> = [];
    const startReceiver = async () => {
      const received: Received[] = [];
      const server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(body) });
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      receivers.push({ server, url, received });
    };

    beforeAll(async () => {
      await startReceiver();
      await startReceiver();
      [scorpio, broker] = await Promise.all([
        startScorpio({ jar: (found as { jar: string }).jar }),
        startTestBroker({ api: 'ngsi-ld' }),
      ]);
    }, 600_000);
    afterAll(async () => {
      await scorpio?.stop();
      await broker?.close();
      for (const r of receivers) r.server.close();
    });

    it.each([undefined, 'city'])('every request answered alike (tenant: %s)', async (tenant) => {
      const disagreements: string[] = [];
      const [toScorpio, toTest] = receivers as [(typeof receivers)[0], (typeof receivers)[0]];
      const ours = steps(`${toTest.url}/${tenant ?? 'default'}`);
      const theirs = steps(`${toScorpio.url}/${tenant ?? 'default'}`);
      for (const [k, step] of theirs.entries()) {
        const real = await ask(scorpio.url, step, tenant);
        const test = await ask(broker.url, ours[k] as Step, tenant);
        if (step.pauseMs) await sleep(step.pauseMs);
        if (JSON.stringify(real) !== JSON.stringify(test))
          disagreements.push(`${step.name}:\n  scorpio ${JSON.stringify(real)}\n  test    ${JSON.stringify(test)}`);
      }
      expect(disagreements.join('\n')).toBe('');
    });

    it('and the notifications alike: the same changes, bodies and headers; deletions only when asked', async () => {
      // Both deliver after answering the write: wait until Scorpio has sent as many as the test broker of those about
      // entities that stay.
      await broker.subscriptions.idle();
      const others = (r: Received[]) =>
        r.filter((x) => !JSON.stringify(x.body).includes('urn:ngsi-ld:Sensor:4')).length;
      const [real0, test0] = receivers as [(typeof receivers)[0], (typeof receivers)[0]];
      for (let waited = 0; waited < 30_000 && others(real0.received) < others(test0.received); waited += 250)
        await sleep(250);
      await sleep(1000); // and a little longer, for any it sends beyond
      const of = (received: Received[]) =>
        received
          .map((r) => ({
            path: r.path,
            secret: r.headers['x-secret'],
            tenant: r.headers['ngsild-tenant'],
            body: normalize(r.body),
          }))
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      const [toScorpio, toTest] = receivers as [(typeof receivers)[0], (typeof receivers)[0]];
      const isDeletion = (r: { body: unknown }) => JSON.stringify(r.body).includes('deletedAt');
      const real = of(toScorpio.received);
      const ours = of(toTest.received);
      expect(real.length).toBeGreaterThan(0);
      // The changes of entities that stay: the same notifications. The entity created and deleted 2 s later: Scorpio
      // builds its notifications after answering, from its database, and under load (load average above 15 here)
      // has lost the creation's once the entity was gone; what it sends of it is a part of what the test broker sends.
      const ofFour = (r: { body: unknown }) => JSON.stringify(r.body).includes('urn:ngsi-ld:Sensor:4');
      expect(ours.filter((r) => !ofFour(r))).toEqual(real.filter((r) => !ofFour(r)));
      for (const r of real.filter(ofFour)) expect(ours).toContainEqual(r);
      // A deletion is notified only to the subscriptions that asked for it (notificationTrigger), with deletedAt. The
      // test broker notifies each of them; Scorpio 5.0.3 loses some (in most runs here, one of the two tenants' —
      // which one varies).
      const deletions = ours.filter(isDeletion);
      expect(deletions.map((d) => d.path)).toEqual(['/city/all', '/default/all']);
      for (const d of real.filter(isDeletion)) expect(deletions).toContainEqual(d);
    });
  },
);
