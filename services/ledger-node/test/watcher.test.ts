// The watcher's passes against real test brokers over HTTP (one primary, two federated). The chain is
// played by the test: what the watcher submits is "finalized" by handing it back through
// applyFinalized, exactly what the node does for each finalized block.
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createBrokerHttp,
  type ObservationRecord,
  Watcher,
  type WatcherConfig,
  type WatcherOptions,
} from '../src/broker/index.ts';
import { attribute, entityId, seed, setAttribute, startTestBroker, type TestBroker } from '../test-broker/index.ts';
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

async function harness(options: WatcherOptions = {}): Promise<Harness> {
  const primary = await startTestBroker();
  const fed = [await startTestBroker(), await startTestBroker()];
  for (const b of [primary, ...fed]) seed(b, { count: ENTITIES, attrs: ATTRS });
  const config: WatcherConfig = {
    primary: { url: primary.url, role: 'primary', api: 'ngsi-v2' },
    federated: fed.map((b) => ({ url: b.url, role: 'federated' as const, api: 'ngsi-v2' as const })),
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
