// The test broker's fidelity, proven with the FIWARE client library ngsijs: what ngsijs gets from
// it is what Orion's documentation says Orion answers (pagination: default limit 20, at most 1000,
// `options=count` → Fiware-Total-Count, out-of-bound offset → []; default attribute types; tenants
// and service paths; 422 on a duplicate create; 404 on a missing entity), and the NGSI-LD side's
// count header, tenants and context handling.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  ENTITY_TYPE,
  entityId,
  seed,
  setAttribute,
  startTestBroker,
  type TestBroker,
} from '@scriptorium/harness/test-broker';
import { freePort } from '@scriptorium/test-support/ports';
import NGSI from 'ngsijs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrokerHttp, readBroker } from '../src/broker/index.ts';
import { sleep } from './helpers.ts';

describe('test broker, NGSI-v2, driven by ngsijs', () => {
  let broker: TestBroker;
  let ngsi: InstanceType<typeof NGSI.Connection>;

  beforeAll(async () => {
    broker = await startTestBroker({ api: 'ngsi-v2' });
    seed(broker, { count: 322, attrs: 3 });
    ngsi = new NGSI.Connection(broker.url);
  });
  afterAll(() => broker.close());

  it('pages as the pagination manual says: 20 by default, count in Fiware-Total-Count, [] past the end', async () => {
    const first = await ngsi.v2.listEntities({ count: true });
    expect(first.results).toHaveLength(20);
    expect(first.count).toBe(322);
    expect(first.results[0]?.id).toBe(entityId(0));

    const pages: string[] = [];
    for (let offset = 0; offset < 322; offset += 100) {
      const page = await ngsi.v2.listEntities({ offset, limit: 100 });
      pages.push(...page.results.map((e) => e.id));
    }
    expect(pages).toHaveLength(322);
    expect(new Set(pages).size).toBe(322);
    expect(pages[321]).toBe(entityId(321));

    const past = await ngsi.v2.listEntities({ offset: 1000, limit: 100 });
    expect(past.results).toEqual([]);
  });

  it('refuses a limit above 1000', async () => {
    await expect(ngsi.v2.listEntities({ limit: 1001 })).rejects.toBeInstanceOf(NGSI.InvalidResponseError);
    const res = await fetch(`${broker.url}/v2/entities?limit=1001`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'BadRequest', description: 'Bad pagination limit: /1001/ [max: 1000]' });
  });

  it('normalized entities carry {type, value, metadata}; keyValues gives bare values', async () => {
    const { entity } = await ngsi.v2.getEntity({ id: entityId(3), type: ENTITY_TYPE });
    expect(entity).toMatchObject({
      id: entityId(3),
      type: ENTITY_TYPE,
      temperature: { type: 'Number', value: 1.5 },
      status: { type: 'Text', value: 'state-1' },
    });
    const kv = await ngsi.v2.listEntities({ keyValues: true, limit: 1, offset: 3 });
    expect(kv.results[0]).toEqual({
      id: entityId(3),
      type: ENTITY_TYPE,
      temperature: 1.5,
      status: 'state-1',
      active: false,
    });
  });

  it('infers Orion default attribute types on keyValues creation; a duplicate create is AlreadyExists (422)', async () => {
    const created = await ngsi.v2.createEntity(
      { id: 'Room1', type: 'Room', temperature: 23, name: 'hall', open: false, pos: { x: 1 } },
      { keyValues: true },
    );
    expect(created.location).toBe('/v2/entities/Room1?type=Room');
    const { entity } = await ngsi.v2.getEntity({ id: 'Room1' });
    expect(entity).toEqual({
      id: 'Room1',
      type: 'Room',
      temperature: { type: 'Number', value: 23, metadata: {} },
      name: { type: 'Text', value: 'hall', metadata: {} },
      open: { type: 'Boolean', value: false, metadata: {} },
      pos: { type: 'StructuredValue', value: { x: 1 }, metadata: {} },
    });
    await expect(ngsi.v2.createEntity({ id: 'Room1', type: 'Room' })).rejects.toBeInstanceOf(NGSI.AlreadyExistsError);
    await expect(ngsi.v2.getEntity({ id: 'nope' })).rejects.toBeInstanceOf(NGSI.NotFoundError);
  });

  it('updates attributes (PATCH) and batch-appends (POST /v2/op/update)', async () => {
    await ngsi.v2.updateEntityAttributes({ id: 'Room1', type: 'Room', temperature: { value: 25, type: 'Number' } });
    expect((await ngsi.v2.getEntity({ id: 'Room1' })).entity.temperature).toEqual({
      type: 'Number',
      value: 25,
      metadata: {},
    });
    await ngsi.v2.batchUpdate(
      { actionType: 'append', entities: [{ id: 'Room2', type: 'Room', temperature: 19 }] },
      { keyValues: true },
    );
    const rooms = await ngsi.v2.listEntities({ type: 'Room', count: true });
    expect(rooms.count).toBe(2);
  });

  it('keeps tenants apart and filters by service path (absent = all, /# recursive)', async () => {
    await ngsi.v2.createEntity({ id: 'S1', type: 'Spot' }, { service: 'smartcity', servicepath: '/madrid' });
    await ngsi.v2.createEntity({ id: 'S2', type: 'Spot' }, { service: 'smartcity', servicepath: '/madrid/centro' });
    await ngsi.v2.createEntity({ id: 'S3', type: 'Spot' }, { service: 'smartcity', servicepath: '/valencia' });
    const ids = async (scope: { service?: string; servicepath?: string }) =>
      (await ngsi.v2.listEntities({ ...scope, count: true })).results.map((e) => e.id);
    expect(await ids({ service: 'smartcity' })).toEqual(['S1', 'S2', 'S3']);
    expect(await ids({ service: 'SmartCity', servicepath: '/madrid' })).toEqual(['S1']);
    expect(await ids({ service: 'smartcity', servicepath: '/madrid/#' })).toEqual(['S1', 'S2']);
    expect(await ids({ service: 'smartcity', servicepath: '/madrid,/valencia' })).toEqual(['S1', 'S3']);
    expect(await ids({ service: 'othercity' })).toEqual([]);
    const defaultTenant = await ngsi.v2.listEntities({ type: 'Spot' });
    expect(defaultTenant.results).toEqual([]);
  });

  it('answers bad tenant and service path headers with Orion errors', async () => {
    const bad = await fetch(`${broker.url}/v2/entities`, { headers: { 'Fiware-Service': 'no-dash' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { description: string }).description).toBe('bad character in tenant name');
    const path = await fetch(`${broker.url}/v2/entities`, { headers: { 'Fiware-ServicePath': 'relative' } });
    expect(path.status).toBe(400);
    const skip = await fetch(`${broker.url}/v2/entities?options=count,skipForwarding&limit=1`);
    expect(skip.status).toBe(200);
    expect(skip.headers.get('fiware-total-count')).toBe('324');
    expect(skip.headers.get('content-type')).toBe('application/json');
  });
});

describe('test broker, NGSI-LD, driven by ngsijs', () => {
  let broker: TestBroker;
  let ngsi: InstanceType<typeof NGSI.Connection>;

  beforeAll(async () => {
    broker = await startTestBroker({ api: 'ngsi-ld' });
    seed(broker, { count: 45, attrs: 10, tenant: 'city' });
    ngsi = new NGSI.Connection(broker.url);
  });
  afterAll(() => broker.close());

  it('counts in NGSILD-Results-Count and pages with limit/offset', async () => {
    const first = await ngsi.ld.queryEntities({ tenant: 'city', type: 'Sensor', count: true, limit: 20 });
    expect(first.count).toBe(45);
    expect(first.results).toHaveLength(20);
    const last = await ngsi.ld.queryEntities({ tenant: 'city', limit: 20, offset: 40, type: 'Sensor' });
    expect(last.results.map((e) => e.id)).toEqual([41, 42, 43, 44, 45].map((n) => entityId(n - 1)));
    expect(last.results[0]).toMatchObject({
      temperature: { type: 'Property', value: 20 },
      site: { type: 'Relationship' },
    });
  });

  it('keeps tenants apart: an unknown tenant is TenantNotFound (404), as Scorpio answers', async () => {
    await expect(ngsi.ld.queryEntities({ tenant: 'nowhere', type: 'Sensor' })).rejects.toBeInstanceOf(
      NGSI.InvalidResponseError,
    );
    const res = await fetch(`${broker.url}/ngsi-ld/v1/entities?type=Sensor`, {
      headers: { 'NGSILD-Tenant': 'nowhere' },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { type: string }).type).toBe('https://uri.etsi.org/ngsi-ld/errors/TenantNotFound');
    const defaultTenant = await ngsi.ld.queryEntities({ type: 'Sensor', count: true });
    expect(defaultTenant.count).toBe(0);
  });

  it('creates entities and returns the @context: Link header for application/json, in the body for ld+json', async () => {
    const ctx = 'https://example.org/ctx.jsonld';
    await ngsi.ld.createEntity(
      { id: 'urn:ngsi-ld:Room:1', type: 'Room', temperature: { type: 'Property', value: 21 } },
      { tenant: 'city' },
    );
    await expect(
      ngsi.ld.createEntity({ id: 'urn:ngsi-ld:Room:1', type: 'Room' }, { tenant: 'city' }),
    ).rejects.toBeInstanceOf(NGSI.AlreadyExistsError);
    const got = await ngsi.ld.queryEntities({ tenant: 'city', type: 'Room', '@context': ctx });
    expect(got.format).toBe('application/ld+json');
    expect(got.results[0]).toMatchObject({ id: 'urn:ngsi-ld:Room:1', '@context': ctx });
    const plain = await fetch(`${broker.url}/ngsi-ld/v1/entities?type=Room&count=true`, {
      headers: {
        'NGSILD-Tenant': 'city',
        Accept: 'application/json',
        Link: `<${ctx}>; rel="http://www.w3.org/ns/json-ld#context"`,
      },
    });
    expect(plain.headers.get('link')).toContain(`<${ctx}>`);
    expect(plain.headers.get('ngsild-results-count')).toBe('1');
    expect(await plain.json()).toEqual([
      { id: 'urn:ngsi-ld:Room:1', type: 'Room', temperature: { type: 'Property', value: 21 } },
    ]);
  });

  it('refuses a listing without id, type, attrs, q or geometry, as Scorpio does (idPattern and local=true do not count)', async () => {
    for (const query of ['', '?idPattern=.*', '?local=true&count=true']) {
      const res = await fetch(`${broker.url}/ngsi-ld/v1/entities${query}`, { headers: { 'NGSILD-Tenant': 'city' } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { type: string }).type).toBe('https://uri.etsi.org/ngsi-ld/errors/BadRequestData');
    }
    const typed = await fetch(`${broker.url}/ngsi-ld/v1/entities?type=Sensor,Room&count=true&limit=0`, {
      headers: { 'NGSILD-Tenant': 'city' },
    });
    expect(typed.headers.get('ngsild-results-count')).toBe('46');
    const localOnly = await fetch(`${broker.url}/ngsi-ld/v1/entities?type=Sensor&localOnly=true`, {
      headers: { 'NGSILD-Tenant': 'city' },
    });
    expect(localOnly.status).toBe(500);
  });

  it('lists its entity types, and entities of several types under each', async () => {
    const created = await fetch(`${broker.url}/ngsi-ld/v1/entities`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'NGSILD-Tenant': 'city' },
      body: JSON.stringify({
        id: 'urn:ngsi-ld:Thing:1',
        type: ['Device', 'Sensor'],
        t: { type: 'Property', value: 1 },
      }),
    });
    expect(created.status).toBe(201);
    const types = await fetch(`${broker.url}/ngsi-ld/v1/types`, { headers: { 'NGSILD-Tenant': 'city' } });
    expect(((await types.json()) as { typeList: string[] }).typeList).toEqual(['Device', 'Room', 'Sensor']);
    for (const type of ['Device', 'Sensor']) {
      const got = await ngsi.ld.queryEntities({ tenant: 'city', type, count: true, limit: 1000 });
      expect(got.results.find((e) => e.id === 'urn:ngsi-ld:Thing:1')).toMatchObject({ type: ['Device', 'Sensor'] });
    }
  });
});

describe('test broker at scale and as a process', () => {
  it('holds 100k entities of 10 attributes and serves every one through 1000-entity pages', async () => {
    const broker = await startTestBroker({ api: 'ngsi-v2' });
    seed(broker, { count: 100_000, attrs: 10 });
    const http = createBrokerHttp();
    const entities = await readBroker(http, { url: broker.url, role: 'primary', api: 'ngsi-v2' });
    expect(entities).toHaveLength(100_000);
    expect(entities[99_999]?.id).toBe(entityId(99_999));
    expect(entities[99_999]?.names).toHaveLength(10);
    expect(broker.listRequests).toBe(100);
    await http.close();
    await broker.close();
  });

  it('a listing page read again is the same bytes until a write changes it; each answer has its own correlator', async () => {
    const broker = await startTestBroker({ api: 'ngsi-v2' });
    seed(broker, { count: 30, attrs: 2 });
    const page = async (headers: Record<string, string> = {}) => {
      const res = await fetch(`${broker.url}/v2/entities?limit=10&offset=10&options=count`, { headers });
      return { body: await res.text(), correlator: res.headers.get('fiware-correlator') };
    };
    const a = await page();
    const b = await page();
    expect(b.body).toBe(a.body);
    expect(b.correlator).not.toBe(a.correlator);
    expect((await page({ 'fiware-correlator': 'c-1' })).correlator).toBe('c-1');
    // Another tenant is another listing (empty here), not the cached one.
    expect((await page({ 'fiware-service': 'other' })).body).toBe('[]');
    setAttribute(broker, entityId(12), 'temperature', { type: 'Number', value: -1 });
    const changed = await page();
    expect(changed.body).not.toBe(a.body);
    expect(JSON.parse(changed.body)[2].temperature.value).toBe(-1);
    await broker.close();
  });

  it('main.ts seeds, listens and scripts tampering: restore the last, tamper the next', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(import.meta.resolve('@scriptorium/harness/test-broker/main')),
        '--port',
        String(port),
        '--entities',
        '5',
        '--attrs',
        '2',
        '--tamper-every-ms',
        '150',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const events: Array<{ event: string; entity?: string; value?: number }> = [];
    let buffered = '';
    child.stdout?.on('data', (c: Buffer) => {
      buffered += c.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const l of lines) events.push(JSON.parse(l));
    });
    try {
      const end = Date.now() + 15_000;
      while (events.filter((e) => e.event === 'restored').length < 1 && Date.now() < end) await sleep(50);
      expect(events[0]).toMatchObject({ event: 'listening', url: `http://127.0.0.1:${port}` });
      const tampered = events.filter((e) => e.event === 'tampered');
      expect(tampered[0]?.entity).toBe(entityId(0));
      expect(events.find((e) => e.event === 'restored')?.entity).toBe(entityId(0));
      const ngsi = new NGSI.Connection(`http://127.0.0.1:${port}`);
      const { entity } = await ngsi.v2.getEntity({ id: entityId(0), type: ENTITY_TYPE, keyValues: true });
      expect(entity.temperature).toBe(0);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
