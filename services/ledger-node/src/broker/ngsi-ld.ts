// NGSI-LD listing (ETSI GS CIM 009) in a form every broker must serve: a query needs an entity type (or ids,
// attributes, a q or geo filter; Scorpio 5.0.3 refuses one with `idPattern` alone, 400), so a read first discovers
// the types (`GET /ngsi-ld/v1/types`, an EntityTypeList) and then lists them, several per query
// (`type=A,B,…`: an entity of any of them), in groups that keep the URL short. An entity of several types is
// listed by every query naming one of them: the reader keeps it in the group of its first type (listing.ts).
// The total is in `NGSILD-Results-Count`, the `@context` in a `Link` header with `Accept: application/json`, the
// tenant in `NGSILD-Tenant`, `X-Auth-Token` for a broker behind a PEP proxy. On the primary `local=true` asks for
// its own entities only; brokers differ (Scorpio 5.0.3 ignores `local`, and its own `localOnly` answers 500), so
// whether the primary's answer holds data of registered context sources is told by its registrations
// (`primaryScope`).
//
// Subscriptions: `POST /ngsi-ld/v1/subscriptions/` naming every entity type the broker holds (an `entities` entry
// needs a type: Scorpio 5.0.3 refuses one without), created, updated and deleted (`notificationTrigger`: without
// it deletions are not notified), normalized, to this node's URL with the subscription's secret in `receiverInfo`
// (sent as a header); `expiresAt`, renewed by PATCH, which also carries types the broker gained since.
import {
  type BrokerEndpoint,
  type ListingProtocol,
  type ListingQuery,
  NGSI_LD_CORE_CONTEXT,
  type SubscriptionProtocol,
  type SubscriptionTarget,
} from './endpoint.ts';
import type { BrokerHttp } from './http-client.ts';
import { NOTIFY_TOKEN_HEADER } from './notification.ts';
import { BrokerReadError } from './read-error.ts';

export const NGSI_LD_MAX_LIMIT = 1000;
/** Characters of type names in one query's `type=` (brokers cap the request line: Scorpio at 50,000). */
const TYPES_PER_QUERY_CHARS = 2048;

function headers(endpoint: BrokerEndpoint): Record<string, string> {
  const context = endpoint.ldContext ?? NGSI_LD_CORE_CONTEXT;
  const h: Record<string, string> = {
    accept: 'application/json',
    link: `<${context}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
  };
  if (endpoint.service) h['ngsild-tenant'] = endpoint.service;
  if (endpoint.authToken) h['x-auth-token'] = endpoint.authToken;
  return h;
}

/** The type names of a `GET /types` answer: an EntityTypeList, or (older brokers) an array of EntityType. */
export function typeNames(broker: string, body: Buffer): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BrokerReadError(broker, 'malformed', 'the entity types are not JSON');
  }
  const list = Array.isArray(parsed)
    ? parsed.map((t) => (t as { typeName?: unknown } | null)?.typeName)
    : (parsed as { typeList?: unknown } | null)?.typeList;
  if (!Array.isArray(list) || !list.every((t): t is string => typeof t === 'string' && t !== '' && !t.includes(',')))
    throw new BrokerReadError(broker, 'malformed', 'the entity types are not a list of type names');
  return [...new Set(list)].sort();
}

/** Type names in groups whose joined length stays under the cap (each group one query). */
export function groupTypes(types: readonly string[], maxChars = TYPES_PER_QUERY_CHARS): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  let chars = 0;
  for (const t of types) {
    const add = encodeURIComponent(t).length + 1;
    if (current.length > 0 && chars + add > maxChars) {
      groups.push(current);
      current = [];
      chars = 0;
    }
    current.push(t);
    chars += add;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

const entitiesUrl = (endpoint: BrokerEndpoint, query: URLSearchParams) =>
  `${endpoint.url}/ngsi-ld/v1/entities?${query.toString().replaceAll('%2C', ',')}`;

export const ngsiLdListing: ListingProtocol = {
  maxLimit: NGSI_LD_MAX_LIMIT,
  countHeader: 'ngsild-results-count',
  async queries(http: BrokerHttp, endpoint: BrokerEndpoint): Promise<ListingQuery[]> {
    const res = await http.get(endpoint.url, `${endpoint.url}/ngsi-ld/v1/types`, headers(endpoint));
    return groupTypes(typeNames(endpoint.url, res.body)).map((types, k) => ({ key: `t${k}`, types }));
  },
  pageRequest(endpoint, query, offset, limit, modifiedSince) {
    const q = new URLSearchParams({
      type: (query.types ?? []).join(','),
      limit: String(limit),
      offset: String(offset),
      count: 'true',
    });
    if (modifiedSince) q.set('q', `modifiedAt>"${modifiedSince}"`);
    if (endpoint.role === 'primary') q.set('local', 'true');
    return { url: entitiesUrl(endpoint, q), headers: headers(endpoint) };
  },
  idsRequest(endpoint, ids) {
    const q = new URLSearchParams({ id: ids.join(','), limit: String(NGSI_LD_MAX_LIMIT), count: 'true' });
    if (endpoint.role === 'primary') q.set('local', 'true');
    return { url: entitiesUrl(endpoint, q), headers: headers(endpoint) };
  },
  async primaryScope(http, endpoint, types) {
    if (types.length === 0) return { restricted: true, how: 'no entity types' };
    // In the listing's groups of types (a short URL); a registration naming types of two groups counts twice,
    // which only matters as zero or not. limit=1: Scorpio 5.0.3 counts the rows of the page it reads, so a count
    // at limit=0 is always 0.
    let registrations = 0;
    for (const group of groupTypes(types)) {
      const q = new URLSearchParams({ type: group.join(','), count: 'true', limit: '1' });
      const url = `${endpoint.url}/ngsi-ld/v1/csourceRegistrations?${q.toString().replaceAll('%2C', ',')}`;
      try {
        const res = await http.get(endpoint.url, url, headers(endpoint));
        registrations += Number(res.headers['ngsild-results-count'] ?? Number.NaN);
      } catch (err) {
        return {
          restricted: false,
          how: `cannot tell whether it forwards: its context source registrations could not be read (${(err as Error).message})`,
        };
      }
    }
    if (!Number.isSafeInteger(registrations))
      return { restricted: false, how: 'cannot tell whether it forwards: no registration count' };
    if (registrations === 0) return { restricted: true, how: 'no context source registered for its entity types' };
    return {
      restricted: false,
      how: `${registrations} context source registration(s) for its entity types: local=true is sent, but brokers differ in honouring it (Scorpio 5.0.3 ignores it), so the primary's answer may hold their data`,
    };
  },
};

const subscriptionsUrl = (endpoint: BrokerEndpoint) => `${endpoint.url}/ngsi-ld/v1/subscriptions`;
const TRIGGERS = [
  'entityCreated',
  'entityUpdated',
  'entityDeleted',
  'attributeCreated',
  'attributeUpdated',
  'attributeDeleted',
];

const entitiesOf = (target: SubscriptionTarget) => target.types.map((type) => ({ type }));

export const ngsiLdSubscriptions: SubscriptionProtocol = {
  create: (endpoint, target) => ({
    url: `${subscriptionsUrl(endpoint)}/`,
    headers: headers(endpoint),
    body: {
      type: 'Subscription',
      description: target.description,
      entities: entitiesOf(target),
      notificationTrigger: TRIGGERS,
      notification: {
        format: 'normalized',
        endpoint: {
          uri: target.url,
          accept: 'application/json',
          receiverInfo: [{ key: NOTIFY_TOKEN_HEADER, value: target.token }],
        },
      },
      expiresAt: new Date(target.expiresAt).toISOString(),
    },
  }),
  createdId(res) {
    const location = res.headers.location;
    const raw = Array.isArray(location) ? location[0] : location;
    const id = raw ? /\/ngsi-ld\/v1\/subscriptions\/([^?#]+)$/.exec(raw)?.[1] : undefined;
    return id ? decodeURIComponent(id) : undefined;
  },
  one: (endpoint, id) => ({
    url: `${subscriptionsUrl(endpoint)}/${encodeURIComponent(id)}`,
    headers: headers(endpoint),
  }),
  renew: (endpoint, id, target) => ({
    url: `${subscriptionsUrl(endpoint)}/${encodeURIComponent(id)}`,
    headers: headers(endpoint),
    body: { entities: entitiesOf(target), expiresAt: new Date(target.expiresAt).toISOString() },
  }),
  list: (endpoint, offset, limit) => ({
    url: `${subscriptionsUrl(endpoint)}/?limit=${limit}&offset=${offset}&count=true`,
    headers: headers(endpoint),
  }),
  listed(body) {
    const list = JSON.parse(body.toString('utf8')) as unknown;
    if (!Array.isArray(list)) return [];
    return list
      .filter((s): s is { id: string; description?: unknown } => typeof s?.id === 'string')
      .map((s) => ({ id: s.id, description: typeof s.description === 'string' ? s.description : undefined }));
  },
};
