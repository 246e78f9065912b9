// The broker clients against the real test broker over HTTP(S): paging across 2,500 entities,
// tenants and count headers on both APIs, HTTPS with a private CA, and every way a read can fail —
// a broker that is down, a 500 mid-pass, malformed JSON, a timeout, a listing that moves — ending
// in a BrokerReadError with its reason, never in a partial result.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  attribute,
  type BrokerRequest,
  entityId,
  seed,
  startTestBroker,
  type TestBroker,
} from '@scriptorium/harness/test-broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BodyBuffer,
  type BrokerEndpoint,
  type BrokerHttp,
  BrokerReadError,
  createBrokerHttp,
  listingFor,
  readBroker,
  type UnreadableEntity,
} from '../src/broker/index.ts';
import { createTestPki, type TestPki } from './tls-certs.ts';

const fast = { retries: 2, backoffBaseMs: 5, backoffMaxMs: 20, timeoutMs: 2000 };

async function expectReadError(p: Promise<unknown>, reason: string): Promise<BrokerReadError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BrokerReadError);
  expect((err as BrokerReadError).reason).toBe(reason);
  return err as BrokerReadError;
}

describe.each(['ngsi-v2', 'ngsi-ld'] as const)('%s client against the test broker', (api) => {
  let broker: TestBroker;
  let http: BrokerHttp;
  const seen: BrokerRequest[] = [];
  const endpoint = (over: Partial<BrokerEndpoint> = {}): BrokerEndpoint => ({
    url: broker.url,
    role: 'federated',
    api,
    service: 'city',
    ...over,
  });

  beforeAll(async () => {
    broker = await startTestBroker({ api });
    seed(broker, { count: 2500, attrs: 3, tenant: 'city', ...(api === 'ngsi-v2' ? { servicePath: '/north' } : {}) });
    seed(broker, { count: 7, attrs: 2, tenant: 'other' });
    broker.onList = (_n, req) => seen.push(req);
    http = createBrokerHttp(fast);
  });
  afterAll(async () => {
    await http.close();
    await broker.close();
  });

  it('reads all 2,500 entities in pages of 1000 with the count header, in creation order', async () => {
    seen.length = 0;
    const entities = await readBroker(http, endpoint());
    expect(entities).toHaveLength(2500);
    expect(entities[0]?.id).toBe(entityId(0));
    expect(entities[2499]?.id).toBe(entityId(2499));
    // Scorpio lists an NGSI-LD entity's attributes in name order, and so does the test broker.
    expect(entities[0]?.names).toEqual(
      api === 'ngsi-v2' ? ['temperature', 'status', 'active'] : ['active', 'status', 'temperature'],
    );
    expect(seen.map((r) => [r.query.get('offset'), r.query.get('limit')])).toEqual([
      ['0', '1000'],
      ['1000', '1000'],
      ['2000', '1000'],
    ]);
    if (api === 'ngsi-v2') {
      expect(seen[0]?.query.get('options')).toBe('count');
      expect(seen[0]?.headers['fiware-service']).toBe('city');
    } else {
      expect(seen[0]?.query.get('count')).toBe('true');
      expect(seen[0]?.headers['ngsild-tenant']).toBe('city');
      expect(seen[0]?.headers.link).toContain('ngsi-ld-core-context.jsonld');
    }
    const small = await readBroker(http, endpoint(), { pageSize: 300 });
    expect(small.map((e) => e.id)).toEqual(entities.map((e) => e.id));
  });

  it('a read reuses one body buffer: every page has exactly the bytes sent, however its size changes', async () => {
    const e = endpoint();
    const get = (offset: number, limit: number, into?: BodyBuffer) => {
      const req = listingFor(e).pageRequest(e, { key: 'all', types: ['Sensor'] }, offset, limit);
      return http.get(e.url, req.url, req.headers, into);
    };
    const bodies = new BodyBuffer(1024);
    // Small, large (the buffer grows past its 1 KiB), small again, large again: each as a fresh read gives it.
    for (const [offset, limit] of [
      [0, 2],
      [0, 1000],
      [5, 3],
      [1000, 1000],
    ] as const) {
      const fresh = (await get(offset, limit)).body.toString('utf8');
      const reused = (await get(offset, limit, bodies)).body.toString('utf8');
      expect(reused).toBe(fresh);
      expect(JSON.parse(reused)).toHaveLength(limit);
    }
  });

  it('keeps tenants apart; the primary skips forwarding; the token goes in X-Auth-Token', async () => {
    seen.length = 0;
    const other = await readBroker(http, endpoint({ service: 'other', role: 'primary', authToken: 'tok-123' }));
    expect(other).toHaveLength(7);
    if (api === 'ngsi-v2') expect(seen[0]?.query.get('options')).toBe('count,skipForwarding');
    else expect(seen[0]?.query.get('local')).toBe('true');
    expect(seen[0]?.headers['x-auth-token']).toBe('tok-123');
    if (api === 'ngsi-v2') {
      expect(await readBroker(http, endpoint({ servicePath: '/south' }))).toHaveLength(0);
      expect(await readBroker(http, endpoint({ servicePath: '/north' }))).toHaveLength(2500);
    } else {
      await expectReadError(readBroker(http, endpoint({ service: 'nowhere' })), 'http_status');
    }
  });

  it('a 500 mid-pass is retried; 500s that persist fail the read', async () => {
    broker.faults.push({ kind: 'status', status: 500 });
    expect(await readBroker(http, endpoint())).toHaveLength(2500);
    const before = broker.listRequests;
    broker.onList = (n) => {
      if (n === before + 1)
        broker.faults.push(
          { kind: 'status', status: 500 },
          { kind: 'status', status: 503 },
          { kind: 'status', status: 500 },
        );
    };
    const err = await expectReadError(readBroker(http, endpoint()), 'http_status');
    expect(err.message).toContain('answered 500');
    broker.onList = undefined;
    broker.faults.length = 0;
  });

  it('malformed JSON, a truncated body and a missing count are clear errors, not data', async () => {
    broker.faults.push({ kind: 'garbage' });
    expect((await expectReadError(readBroker(http, endpoint()), 'malformed')).message).toContain('not JSON');
    broker.faults.push({ kind: 'truncated' }, { kind: 'truncated' }, { kind: 'truncated' });
    await expectReadError(readBroker(http, endpoint()), 'unreachable');
    broker.faults.push({
      kind: 'drop-header',
      header: api === 'ngsi-v2' ? 'Fiware-Total-Count' : 'NGSILD-Results-Count',
    });
    expect((await expectReadError(readBroker(http, endpoint()), 'malformed')).message).toMatch(/missing or invalid/);
    // An entity of no shape any broker sends, inside an otherwise good page: reported with its id, skipped; the
    // rest of the broker is read.
    broker.inject({
      method: 'POST',
      path: api === 'ngsi-v2' ? '/v2/entities' : '/ngsi-ld/v1/entities',
      headers: api === 'ngsi-v2' ? { 'Fiware-Service': 'junk' } : { 'NGSILD-Tenant': 'junk' },
      body: { id: 'urn:ngsi-ld:J:1', type: 'J' },
    });
    const junk = broker.store.tenant('junk', false)?.list()[0];
    if (junk) junk.json = '{"id":"urn:ngsi-ld:J:1","type":"J","a":7}';
    seed(broker, { count: 2, attrs: 1, tenant: 'junk' });
    const unreadable: UnreadableEntity[] = [];
    const read = await readBroker(http, endpoint({ service: 'junk', servicePath: undefined }), {
      onUnreadable: (e) => unreadable.push(e),
    });
    expect(read.map((e) => e.id)).toEqual([entityId(0), entityId(1)]);
    expect(unreadable).toEqual([
      {
        id: 'urn:ngsi-ld:J:1',
        reason: `entity urn:ngsi-ld:J:1: attribute a is not ${api === 'ngsi-v2' ? 'an object' : 'an NGSI-LD attribute'}`,
      },
    ]);
    broker.faults.length = 0;
  });

  it('a listing that moves under the read is read again, and refused when it keeps moving', async () => {
    let n = 0;
    const first = broker.listRequests;
    broker.onList = (i) => {
      if (i === first + 1) seed(broker, { count: 1, attrs: 1, from: 90_000 + n++, tenant: 'city' });
    };
    const again = await readBroker(http, endpoint({ servicePath: undefined }));
    expect(again.length).toBe(2501);
    broker.onList = (i) => {
      if (i % 2 === 1) seed(broker, { count: 1, attrs: 1, from: 91_000 + n++, tenant: 'city' });
    };
    await expectReadError(readBroker(http, endpoint({ servicePath: undefined })), 'inconsistent');
    broker.onList = undefined;
  });

  it('a broker that does not answer in time is a timeout', async () => {
    const slow = createBrokerHttp({ ...fast, timeoutMs: 150, retries: 1 });
    broker.faults.push({ kind: 'delay', ms: 1000 }, { kind: 'delay', ms: 1000 });
    await expectReadError(readBroker(slow, endpoint()), 'timeout');
    await slow.close();
    broker.faults.length = 0;
  });
});

describe('broker reads that cannot happen', () => {
  it('a broker that is down is unreachable (after retries), never an empty listing', async () => {
    const broker = await startTestBroker();
    const url = broker.url;
    await broker.close();
    const http = createBrokerHttp(fast);
    await expectReadError(readBroker(http, { url, role: 'federated', api: 'ngsi-v2' }), 'unreachable');
    await http.close();
  });

  it('a 4xx is final at once (no retries)', async () => {
    const broker = await startTestBroker();
    const http = createBrokerHttp(fast);
    const before = broker.listRequests;
    await expectReadError(
      readBroker(http, { url: broker.url, role: 'federated', api: 'ngsi-v2', service: 'bad-tenant' }),
      'http_status',
    );
    expect(broker.listRequests - before).toBe(1);
    await http.close();
    await broker.close();
  });
});

describe('HTTPS with a private CA', () => {
  let dir: string;
  let pki: TestPki;
  let broker: TestBroker;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-tls-'));
    pki = createTestPki(dir);
    broker = await startTestBroker({ api: 'ngsi-v2', tls: { cert: pki.cert, key: pki.key } });
    seed(broker, { count: 1200, attrs: 2 });
    broker.inject({
      method: 'POST',
      path: `/v2/entities/${encodeURIComponent(entityId(5))}/attrs`,
      body: { temperature: attribute('ngsi-v2', 5, 0, 7) },
    });
  });
  afterAll(async () => {
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads with the CA bundle; without it (or with another CA) the TLS handshake fails: unreachable', async () => {
    expect(broker.url.startsWith('https://')).toBe(true);
    const trusted = createBrokerHttp({ ...fast, ca: pki.ca });
    const entities = await readBroker(trusted, { url: broker.url, role: 'primary', api: 'ngsi-v2' });
    expect(entities).toHaveLength(1200);
    expect(entities[5]?.forms[0]).toBe('{"type":"Number","value":7}');
    await trusted.close();

    const system = createBrokerHttp(fast);
    const err = await expectReadError(
      readBroker(system, { url: broker.url, role: 'primary', api: 'ngsi-v2' }),
      'unreachable',
    );
    expect(err.message).toMatch(/CERT|certificate|SELF_SIGNED|UNABLE/i);
    await system.close();

    const rogue = createBrokerHttp({ ...fast, ca: pki.rogue.cert });
    await expectReadError(readBroker(rogue, { url: broker.url, role: 'primary', api: 'ngsi-v2' }), 'unreachable');
    await rogue.close();
  });
});
