// The watcher's passes against real test brokers over HTTP (one primary, two federated). The chain is
// played by the test: what the watcher submits is "finalized" by handing it back through
// applyFinalized, exactly what the node does for each finalized block.

import {
  attribute,
  entityId,
  seed,
  setAttribute,
  startTestBroker,
  type TestBroker,
} from '@scriptorium/harness/test-broker';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createBrokerHttp,
  type ObservationRecord,
  Watcher,
  type WatcherConfig,
  type WatcherOptions,
} from '../src/broker/index.ts';
import { sleep } from './helpers.ts';

const ENTITIES = 40;
const ATTRS = 3;
const http = createBrokerHttp({ retries: 1, backoffBaseMs: 5, backoffMaxMs: 10, timeoutMs: 2000 });
afterAll(() => http.close());

interface Harness {
  primary: TestBroker;
  fed: TestBroker[];
  watcher: Watcher;
  /** Everything submitted so far, in order. */
  submitted: ObservationRecord[];
  /** Records on the played chain. */
  chain: ObservationRecord[];
  /** The node's window: the watcher hands over records while fewer than this are pending. */
  room: number;
  /** When set, a watcher waiting for room finds the pending records finalized (consensus at work). */
  drainOnWait: boolean;
  /** The most records pending at once. */
  maxPending: number;
  /** Finalizes everything pending (one block). */
  finalize(): void;
  config: WatcherConfig;
}

let h: Harness;

async function harness(options: WatcherOptions = {}, api: 'ngsi-v2' | 'ngsi-ld' = 'ngsi-v2'): Promise<Harness> {
  const primary = await startTestBroker({ api });
  const fed = [await startTestBroker({ api }), await startTestBroker({ api })];
  for (const b of [primary, ...fed]) seed(b, { count: ENTITIES, attrs: ATTRS });
  const config: WatcherConfig = {
    primary: { url: primary.url, role: 'primary', api },
    federated: fed.map((b) => ({ url: b.url, role: 'federated' as const, api })),
    ca: undefined,
    pollIntervalMs: 60_000,
    mode: 'poll',
    sweepIntervalMs: 600_000,
    notifyUrl: 'http://127.0.0.1:9',
    subscriptionCheckMs: 30_000,
  };
  let pending: ObservationRecord[] = [];
  let height = 0;
  const state: Harness = {
    primary,
    fed,
    submitted: [],
    chain: [],
    room: 100_000,
    drainOnWait: false,
    maxPending: 0,
    config,
    watcher: undefined as unknown as Watcher,
    finalize() {
      const seen = new Set(state.chain.map((r) => r.id));
      const block = pending.filter((r) => !seen.has(r.id));
      pending = [];
      state.chain.push(...block);
      state.watcher.applyFinalized(block, ++height);
    },
  };
  state.watcher = new Watcher(
    config,
    {
      submit: (records) => {
        state.submitted.push(...records);
        pending.push(...records);
        state.maxPending = Math.max(state.maxPending, pending.length);
        return records.length;
      },
      room: () => state.room - pending.length,
      roomChanged: async () => {
        await sleep(1);
        if (state.drainOnWait) state.finalize();
      },
    },
    { http, ...options },
  );
  return state;
}

beforeEach(async () => {
  h = await harness();
});
afterEach(async () => {
  await h.watcher.stop();
  for (const b of [h.primary, ...h.fed]) await b.close().catch(() => undefined);
});

const tamper = (b: TestBroker, i: number, value: number) =>
  setAttribute(b, entityId(i), 'temperature', attribute('ngsi-v2', i, 0, value));
const restore = (b: TestBroker, i: number) => setAttribute(b, entityId(i), 'temperature', attribute('ngsi-v2', i, 0));

describe('broker watcher passes', () => {
  it('first pass notarises every observation as OK; then nothing while nothing changes', async () => {
    const first = await h.watcher.pass();
    expect(first).toMatchObject({
      primaryRead: true,
      submitted: { ok: 2 * ENTITIES * ATTRS, tampered: 0 },
      waitedMs: 0,
    });
    expect(new Set(h.submitted.map((r) => r.id)).size).toBe(2 * ENTITIES * ATTRS);
    // Not final yet: the same records again (the mempool drops repeats by id).
    const again = await h.watcher.pass();
    expect(again.submitted.ok).toBe(2 * ENTITIES * ATTRS);
    h.finalize();
    expect((await h.watcher.pass()).submitted).toEqual({ ok: 0, tampered: 0 });
    expect(h.watcher.status().brokers.every((b) => b.ok)).toBe(true);
  });

  it('a tamper gives exactly one TAMPERED record; seen again, none; restored, one OK', async () => {
    await h.watcher.pass();
    h.finalize();
    tamper(h.fed[0] as TestBroker, 7, -5);
    const t = await h.watcher.pass();
    expect(t.submitted).toEqual({ ok: 0, tampered: 1 });
    const record = h.submitted.at(-1) as ObservationRecord;
    expect(record).toMatchObject({
      broker: h.fed[0]?.url,
      entity: entityId(7),
      attribute: 'temperature',
      observed: { type: 'Number', value: -5 },
      verdict: 'TAMPERED',
      seq: 1,
    });
    h.finalize();
    expect((await h.watcher.pass()).submitted).toEqual({ ok: 0, tampered: 0 });
    restore(h.fed[0] as TestBroker, 7);
    expect((await h.watcher.pass()).submitted).toEqual({ ok: 1, tampered: 0 });
    expect(h.submitted.at(-1)).toMatchObject({ entity: entityId(7), verdict: 'OK', seq: 2 });
  });

  it('entities deleted from or added to a federated broker are TAMPERED', async () => {
    await h.watcher.pass();
    h.finalize();
    const fed = h.fed[1] as TestBroker;
    fed.inject({ method: 'DELETE', path: `/v2/entities/${encodeURIComponent(entityId(3))}` });
    seed(fed, { count: 1, attrs: 2, from: 500 });
    const r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: ATTRS + 2 });
    const last = h.submitted.slice(-(ATTRS + 2));
    expect(last.filter((x) => x.entity === entityId(500)).every((x) => x.observed !== null)).toBe(true);
    expect(last.filter((x) => x.entity === entityId(3)).map((x) => x.observed)).toEqual([null, null, null]);
  });

  it('a federated broker that is down or fails mid-pass records nothing, never "deleted"; the other goes on', async () => {
    await h.watcher.pass();
    h.finalize();
    const [a, b] = h.fed as [TestBroker, TestBroker];
    tamper(b, 1, 99);
    a.faults.push({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }); // first page, retried once
    let r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: 1 });
    expect(h.submitted.at(-1)?.broker).toBe(b.url);
    const status = h.watcher.status().brokers.find((s) => s.url === a.url);
    expect(status).toMatchObject({ ok: false, reason: 'http_status' });
    h.finalize();
    await a.close();
    r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: 0 });
    expect(h.watcher.status().brokers.find((s) => s.url === a.url)?.reason).toBe('unreachable');
  });

  it('a broker answering garbage records nothing for that pass, and is read again the next', async () => {
    await h.watcher.pass();
    h.finalize();
    const fed = h.fed[0] as TestBroker;
    tamper(fed, 2, 1234);
    fed.faults.push({ kind: 'garbage' });
    const r = await h.watcher.pass();
    expect(r.submitted.tampered).toBe(0);
    expect(h.watcher.status().brokers.find((s) => s.url === fed.url)).toMatchObject({ ok: false, reason: 'malformed' });
    const next = await h.watcher.pass();
    expect(next.submitted.tampered).toBe(1);
    expect(h.watcher.status().brokers.find((s) => s.url === fed.url)?.ok).toBe(true);
  });

  it('a changed page is split, not parsed: only the entity whose bytes changed is; one malformed entity in it records nothing for that broker', async () => {
    await h.watcher.pass();
    h.finalize();
    const settling = await h.watcher.pass();
    expect(settling.submitted).toEqual({ ok: 0, tampered: 0 });
    expect((await h.watcher.pass()).parsedEntities).toBe(0);
    const fed = h.fed[0] as TestBroker;
    tamper(fed, 7, -5);
    const t = await h.watcher.pass();
    expect(t).toMatchObject({ parsedPages: 1, parsedEntities: 1, submitted: { ok: 0, tampered: 1 } });
    h.finalize();
    // Its record final, entity 7 is judged once more (the chain now holds what it sees) and settles.
    expect(await h.watcher.pass()).toMatchObject({ parsedEntities: 1, submitted: { ok: 0, tampered: 0 } });
    // Another tamper on the same page, and an entity of it whose bytes no longer parse: the broker's read fails.
    tamper(fed, 8, -6);
    const broken = `"id":"${entityId(3)}",`;
    fed.faults.push({
      kind: 'rewrite',
      rewrite: (body) => body.replace(broken, `${broken}"x":{"type":"Text","value":},`),
    });
    const r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: 0 });
    expect(h.watcher.status().brokers.find((s) => s.url === fed.url)).toMatchObject({ ok: false, reason: 'malformed' });
    const next = await h.watcher.pass();
    expect(next).toMatchObject({ parsedEntities: 1, submitted: { ok: 0, tampered: 1 } });
    expect(h.submitted.at(-1)).toMatchObject({ entity: entityId(8), verdict: 'TAMPERED' });
  });

  it('an entity that cannot be read is reported with its id and skipped; the rest of its broker is judged', async () => {
    await h.watcher.pass();
    h.finalize();
    const fed = h.fed[0] as TestBroker;
    tamper(fed, 8, -8);
    // Entity 3 as no broker sends one (an attribute that is no object): its bytes are JSON, the entity is not.
    const stored = fed.store.tenant('', false)?.get(entityId(3), 'Sensor');
    if (stored) stored.json = `{"id":"${entityId(3)}","type":"Sensor","temperature":7}`;
    const r = await h.watcher.pass();
    // Entity 8's tamper is recorded; entity 3 is neither judged nor called missing there.
    expect(r.submitted).toEqual({ ok: 0, tampered: 1 });
    expect(h.submitted.at(-1)).toMatchObject({ entity: entityId(8), verdict: 'TAMPERED' });
    expect(h.watcher.status().brokers.find((b) => b.url === fed.url)).toMatchObject({
      ok: true,
      entities: ENTITIES - 1,
      unreadable: 1,
      unreadableEntities: [
        { id: entityId(3), reason: `entity ${entityId(3)}: attribute temperature is not an object` },
      ],
    });
    // Readable again: judged again, nothing to record (it never changed).
    fed.store.tenant('', false)?.touch(stored as NonNullable<typeof stored>);
    h.finalize();
    expect((await h.watcher.pass()).submitted).toEqual({ ok: 0, tampered: 0 });
    expect(h.watcher.status().brokers.find((b) => b.url === fed.url)?.unreadable).toBe(0);
  });

  it('the primary down: nothing recorded at all', async () => {
    await h.watcher.pass();
    h.finalize();
    tamper(h.fed[0] as TestBroker, 1, 5);
    await h.primary.close();
    const r = await h.watcher.pass();
    expect(r).toMatchObject({ primaryRead: false, submitted: { ok: 0, tampered: 0 } });
  });

  it('a small window: TAMPERED records go first, the pass waits for the chain, never more than the window pending', async () => {
    const [a, b] = h.fed as [TestBroker, TestBroker];
    tamper(a, 5, -1);
    tamper(b, 9, -2);
    h.room = 10;
    h.drainOnWait = true;
    const r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 2 * ENTITIES * ATTRS - 2, tampered: 2 });
    expect(r.waitedMs).toBeGreaterThan(0);
    expect(h.maxPending).toBeLessThanOrEqual(10);
    // Each broker's records: its TAMPERED one first.
    const ofBroker = (url: string) => h.submitted.filter((x) => x.broker === url);
    expect(ofBroker(a.url)[0]).toMatchObject({ entity: entityId(5), verdict: 'TAMPERED' });
    expect(ofBroker(b.url)[0]).toMatchObject({ entity: entityId(9), verdict: 'TAMPERED' });
    h.finalize();
    expect(h.chain).toHaveLength(2 * ENTITIES * ATTRS);
    expect((await h.watcher.pass()).submitted).toEqual({ ok: 0, tampered: 0 });
  });

  it('stop() ends a pass that waits for room', async () => {
    h.room = 5;
    const pass = h.watcher.pass();
    await sleep(50);
    await h.watcher.stop();
    const r = await pass;
    expect(r.submitted.ok).toBeLessThanOrEqual(5);
  });

  it('after a restart, the memory rebuilt from the chain records nothing new', async () => {
    await h.watcher.pass();
    h.finalize();
    tamper(h.fed[0] as TestBroker, 4, 44);
    await h.watcher.pass();
    h.finalize();
    const restarted = new Watcher(h.config, { submit: () => 0, room: () => 100_000 }, { http });
    restarted.applyFinalized(JSON.parse(JSON.stringify(h.chain)), 2);
    expect((await restarted.pass()).submitted).toEqual({ ok: 0, tampered: 0 });
    await restarted.stop();
  });
});

describe('a running watcher', () => {
  it('starts its passes at its place in the poll interval (phase), whatever its start time', async () => {
    await h.watcher.stop();
    const poll = 1000;
    const starts: number[] = [];
    const watcher = new Watcher(
      { ...h.config, pollIntervalMs: poll },
      {
        submit: (records) => records.length,
        room: () => 100_000,
        // Called as each pass begins.
        ready: () => {
          starts.push(Date.now());
          return true;
        },
        phase: () => 0.5,
      },
      { http },
    );
    watcher.start();
    while (starts.length < 4) await sleep(50);
    await watcher.stop();
    // The first pass at once; each later one at 500 ms past a whole second. Timers may fire a little late, and by
    // the wall clock up to 1 ms early (they run on the monotonic clock; Date.now() truncates to whole ms).
    for (const at of starts.slice(1)) expect(at % poll).toBeGreaterThanOrEqual(499);
    for (const at of starts.slice(1)) expect(at % poll).toBeLessThan(900);
    for (let k = 2; k < starts.length; k++)
      expect(Math.round(((starts[k] as number) - (starts[k - 1] as number)) / poll)).toBe(1);
  });
});

describe('a broker with more records than the buffer', () => {
  // 40 entities in pages of 7 (21 records each), at most 30 records buffered: the first read validates the whole listing, and a
  // second read hands the records over page by page from where the buffer filled.
  beforeEach(async () => {
    await h.watcher.stop();
    for (const b of [h.primary, ...h.fed]) await b.close().catch(() => undefined);
    h = await harness({ bufferMax: 30, pageSize: 7 });
  });

  it('the first pass still notarises every observation once, and pages unchanged since are not parsed again', async () => {
    const pagesPerBroker = Math.ceil(ENTITIES / 7);
    const first = await h.watcher.pass();
    expect(first.submitted).toEqual({ ok: 2 * ENTITIES * ATTRS, tampered: 0 });
    expect(new Set(h.submitted.map((r) => r.id)).size).toBe(2 * ENTITIES * ATTRS);
    // Each federated broker read twice: completely, then again from its second page (where 30 records filled).
    expect(first.pages).toBe(3 * pagesPerBroker + 2 * (pagesPerBroker - 1));
    h.finalize();
    const steady = await h.watcher.pass();
    expect(steady.submitted).toEqual({ ok: 0, tampered: 0 });
    expect(steady.pages).toBe(3 * pagesPerBroker);
    // The federated pages became settled in the steady pass itself; the next one parses nothing.
    const quiet = await h.watcher.pass();
    expect(quiet).toMatchObject({ pages: 3 * pagesPerBroker, parsedPages: 0, submitted: { ok: 0, tampered: 0 } });
    tamper(h.fed[1] as TestBroker, 33, 7);
    const t = await h.watcher.pass();
    expect(t.submitted).toEqual({ ok: 0, tampered: 1 });
    expect(t.parsedPages).toBe(1);
    expect(h.submitted.at(-1)).toMatchObject({ entity: entityId(33), verdict: 'TAMPERED' });
  });

  it('a change on the primary is seen on every federated broker', async () => {
    await h.watcher.pass();
    h.finalize();
    await h.watcher.pass();
    tamper(h.primary, 12, 4242);
    const r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: 2 });
    // The primary's page and each federated broker's page holding entity 12 (its primary counterpart changed).
    expect(r).toMatchObject({ parsedPages: 3, parsedEntities: 3 });
    expect(new Set(h.submitted.slice(-2).map((x) => x.broker))).toEqual(new Set(h.fed.map((b) => b.url)));
  });
});

describe('NGSI-LD: the types listed first, entities of several types compared as sets', () => {
  beforeEach(async () => {
    await h.watcher.stop();
    for (const b of [h.primary, ...h.fed]) await b.close().catch(() => undefined);
    h = await harness({}, 'ngsi-ld');
  });

  const create = (b: TestBroker, id: string, type: string | string[], value: number) =>
    b.inject({
      method: 'POST',
      path: '/ngsi-ld/v1/entities',
      body: { id, type, t: { type: 'Property', value } },
    });

  it('the primary with a context source registered for its types is said not to be restricted to its own data', async () => {
    await h.watcher.pass();
    expect(h.watcher.status().brokers[0]?.scope?.restricted).toBe(true);
    const registered = h.primary.inject({
      method: 'POST',
      path: '/ngsi-ld/v1/csourceRegistrations/',
      body: {
        id: 'urn:ngsi-ld:ContextSourceRegistration:elsewhere',
        type: 'ContextSourceRegistration',
        information: [{ entities: [{ type: 'Sensor' }] }],
        endpoint: 'http://127.0.0.1:9/elsewhere',
      },
    });
    expect(registered.status).toBe(201);
    h.finalize();
    await h.watcher.pass();
    expect(h.watcher.status().brokers[0]?.scope).toMatchObject({
      restricted: false,
      how: expect.stringMatching(/^1 context source registration\(s\) for its entity types/),
    });
  });

  it('the same types in another order are the same entity; a type dropped is TAMPERED both ways', async () => {
    create(h.primary, 'urn:ngsi-ld:Thing:1', ['Sensor', 'Device'], 1);
    create(h.fed[0] as TestBroker, 'urn:ngsi-ld:Thing:1', ['Device', 'Sensor'], 1);
    create(h.fed[1] as TestBroker, 'urn:ngsi-ld:Thing:1', ['Sensor', 'Device'], 1);
    const first = await h.watcher.pass();
    expect(first.submitted).toEqual({ ok: 2 * ENTITIES * ATTRS + 2, tampered: 0 });
    expect(h.submitted.filter((r) => r.entity === 'urn:ngsi-ld:Thing:1').map((r) => r.entity_type)).toEqual([
      'Device,Sensor',
      'Device,Sensor',
    ]);
    // The primary's scope: no context source registered for its types, so its answer is its own data.
    expect(h.watcher.status().brokers[0]?.scope).toEqual({
      restricted: true,
      how: 'no context source registered for its entity types',
    });
    h.finalize();
    const fed = h.fed[0] as TestBroker;
    fed.inject({ method: 'DELETE', path: '/ngsi-ld/v1/entities/urn:ngsi-ld:Thing:1' });
    create(fed, 'urn:ngsi-ld:Thing:1', 'Sensor', 1);
    const r = await h.watcher.pass();
    expect(r.submitted).toEqual({ ok: 0, tampered: 2 });
    const last = h.submitted.slice(-2).map((x) => [x.broker, x.entity_type, x.verdict, x.observed]);
    expect(last).toEqual(
      expect.arrayContaining([
        [fed.url, 'Sensor', 'TAMPERED', { type: 'Property', value: 1 }],
        [fed.url, 'Device,Sensor', 'TAMPERED', null],
      ]),
    );
  });
});
