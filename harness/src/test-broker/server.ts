// A context broker for tests, benchmarks and `make dev`: a real HTTP(S) server speaking the
// NGSI-v2 subset Orion serves, or NGSI-LD's (one API per instance), over an in-memory store.
// Tests script it in-process (`inject`, `tamper`, faults); other processes use the ordinary
// NGSI write API over HTTP, exactly as they would against Orion.
import { randomUUID } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { applyFault, BodyTooLarge, type BrokerRequest, type Fault, json, type Reply, readBody, send } from './http.ts';
import { NgsiLd } from './ngsi-ld.ts';
import { NgsiV2 } from './ngsi-v2.ts';
import { Subscriptions } from './notifications.ts';
import { type BrokerApi, EntityStore } from './store.ts';

export interface TestBrokerOptions {
  api?: BrokerApi;
  host?: string;
  /** 0 (default) lets the OS choose. */
  port?: number;
  /** HTTPS with this certificate and key (PEM). */
  tls?: { cert: Buffer; key: Buffer };
  /** Largest accepted request body; Orion's default is 1 MB. */
  maxBodyBytes?: number;
  /** CA bundle its notifications trust (subscribers serving HTTPS with a private CA). */
  notifyCa?: Buffer;
}

/** Requests a test broker answered, by kind. */
export interface RequestCounts {
  /** Entity listings (a page each), of them by a list of ids, and type lists. */
  listings: number;
  byIds: number;
  types: number;
  subscriptions: number;
  writes: number;
  other: number;
  total: number;
}

export interface InjectRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface TestBroker {
  readonly api: BrokerApi;
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly store: EntityStore;
  /** Its subscriptions (every tenant) and their notifications. */
  readonly subscriptions: Subscriptions;
  /** Faults applied, one each, to the next entity-listing requests (GET on the collection). */
  readonly faults: Fault[];
  /** Called before each entity-listing request is answered (n counts them from 0); may change data. */
  onList: ((n: number, req: BrokerRequest) => void) | undefined;
  /** Entity-listing requests answered so far. */
  readonly listRequests: number;
  /** Requests answered so far, by kind (also `GET /_stats`, for tests and benchmarks in other processes). */
  readonly requestCounts: RequestCounts;
  /** Runs one request in-process, through the same handlers as HTTP (no faults). */
  inject(req: InjectRequest): Reply;
  /**
   * Stops answering (connections closed, the port released) and listens again on the same port after `downMs`;
   * with `forgetSubscriptions` it comes back without its subscriptions (the data is kept), as a broker restarted
   * from a state that predates them would.
   */
  restart(options?: { downMs?: number; forgetSubscriptions?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/** Starts a test broker. @example const b = await startTestBroker({ api: 'ngsi-v2' }); */
export async function startTestBroker(options: TestBrokerOptions = {}): Promise<TestBroker> {
  const api = options.api ?? 'ngsi-v2';
  const store = new EntityStore(api);
  const subscriptions = new Subscriptions({ ca: options.notifyCa });
  const handler = api === 'ngsi-v2' ? new NgsiV2(store, subscriptions) : new NgsiLd(store, subscriptions);
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const faults: Fault[] = [];
  let listRequests = 0;
  const counts: RequestCounts = { listings: 0, byIds: 0, types: 0, subscriptions: 0, writes: 0, other: 0, total: 0 };
  const count = (req: BrokerRequest) => {
    counts.total++;
    if (req.method !== 'GET') counts.writes++;
    else if (req.path === collection) {
      counts.listings++;
      if (req.query.has('id')) counts.byIds++;
    } else if (req.path.endsWith('/types')) counts.types++;
    else if (req.path.includes('/subscriptions')) counts.subscriptions++;
    else counts.other++;
  };
  const collection = api === 'ngsi-v2' ? '/v2/entities' : '/ngsi-ld/v1/entities';

  const state = {
    onList: undefined as TestBroker['onList'],
  };

  // Listing pages as answered, until the next request that may write: a benchmark's validators read the same 300
  // pages every poll interval, and these brokers share the machine's cores with them (a deployment's brokers run
  // elsewhere), so each page is rendered once per change rather than once per read.
  const pages = new Map<string, Reply>();
  const MAX_PAGES = 1024;
  // A change made on the store directly (a test's or a benchmark's, not a request) is a change too.
  store.onChange(() => pages.clear());
  const pageKey = (req: BrokerRequest) =>
    [
      req.query.toString(),
      ...['fiware-service', 'fiware-servicepath', 'ngsild-tenant', 'accept', 'link'].map((h) =>
        String(req.headers[h] ?? ''),
      ),
    ].join('\n');

  function answer(req: BrokerRequest): Reply {
    if (!handler.handles(req.path))
      return api === 'ngsi-v2'
        ? json(400, { error: 'BadRequest', description: 'service not found' })
        : json(404, { type: 'https://uri.etsi.org/ngsi-ld/errors/ResourceNotFound', title: 'Service not found' });
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      pages.clear();
      return handler.handle(req);
    }
    if (req.path !== collection) return handler.handle(req);
    const key = pageKey(req);
    const page = pages.get(key);
    if (page) {
      // Orion echoes the request's correlator, or makes one up: never the one of an earlier answer.
      if (page.headers?.['Fiware-Correlator'] === undefined) return page;
      const correlator = String(req.headers['fiware-correlator'] ?? randomUUID());
      return { ...page, headers: { ...page.headers, 'Fiware-Correlator': correlator } };
    }
    const reply = handler.handle(req);
    if (reply.status === 200) {
      if (pages.size >= MAX_PAGES) pages.clear();
      pages.set(key, reply);
    }
    return reply;
  }

  async function onRequest(raw: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(raw.url ?? '/', 'http://broker');
    let body = '';
    try {
      body = await readBody(raw, maxBody);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        send(
          res,
          json(413, {
            error: 'RequestEntityTooLarge',
            description: `payload size: ${err.size}, max size supported: ${maxBody}`,
          }),
        );
        return;
      }
      res.destroy();
      return;
    }
    const req: BrokerRequest = {
      method: raw.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: raw.headers,
      body,
    };
    // Outside NGSI: what this broker answered so far (a benchmark counts the requests validators make).
    if (req.method === 'GET' && req.path === '/_stats') {
      send(res, json(200, counts));
      return;
    }
    count(req);
    const isList = req.method === 'GET' && req.path === collection;
    if (isList) state.onList?.(listRequests, req);
    const reply = answer(req);
    if (isList) {
      listRequests++;
      const fault = faults.shift();
      if (fault && (await applyFault(fault, res, reply))) return;
    }
    send(res, reply);
  }

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    onRequest(req, res).catch(() => res.destroy());
  };
  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : createHttpServer(listener);
  server.keepAliveTimeout = 30_000;
  const listen = (at: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(at, options.host ?? '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  await listen(options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  const url = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    api,
    url,
    store,
    subscriptions,
    faults,
    get onList() {
      return state.onList;
    },
    set onList(fn) {
      state.onList = fn;
    },
    get listRequests() {
      return listRequests;
    },
    requestCounts: counts,
    inject(req: InjectRequest): Reply {
      const u = new URL(req.path, 'http://broker');
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers ?? {})) headers[k.toLowerCase()] = v;
      if (req.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
      return answer({
        method: req.method,
        path: u.pathname,
        query: u.searchParams,
        headers,
        body: req.body === undefined ? '' : JSON.stringify(req.body),
      });
    },
    async restart(restartOptions = {}) {
      await stopListening();
      if (restartOptions.forgetSubscriptions) subscriptions.clear();
      if (restartOptions.downMs) await new Promise((r) => setTimeout(r, restartOptions.downMs));
      await listen(port);
    },
    async close() {
      await stopListening();
      await subscriptions.close();
    },
  };
}
