// NGSI-v2 listing as Orion serves it: `GET /v2/entities?limit=&offset=&options=count` (limit at most
// 1000), the total in `Fiware-Total-Count`, the tenant in `Fiware-Service` and `Fiware-ServicePath`,
// `options=skipForwarding` on the primary (its own data, not what context providers would answer),
// `X-Auth-Token` for a broker behind a PEP proxy. One query lists every entity; entities modified since a time
// are `q=dateModified>…` (Orion's system attribute).
//
// Subscriptions: `POST /v2/subscriptions` for every entity (`idPattern: .*`) of the tenant and service path,
// created, changed and deleted (`alterationTypes`), notified in the normalized format to this node's URL with the
// subscription's secret in a custom header (`httpCustom`); `expires`, renewed by PATCH.
import type { BrokerEndpoint, ListingProtocol, SubscriptionProtocol } from './endpoint.ts';
import { NOTIFY_TOKEN_HEADER } from './notification.ts';

export const NGSI_V2_MAX_LIMIT = 1000;

function headers(endpoint: BrokerEndpoint): Record<string, string> {
  const h: Record<string, string> = { accept: 'application/json' };
  if (endpoint.service) h['fiware-service'] = endpoint.service;
  if (endpoint.servicePath) h['fiware-servicepath'] = endpoint.servicePath;
  if (endpoint.authToken) h['x-auth-token'] = endpoint.authToken;
  return h;
}

const options = (endpoint: BrokerEndpoint) => (endpoint.role === 'primary' ? 'count,skipForwarding' : 'count');

export const ngsiV2Listing: ListingProtocol = {
  maxLimit: NGSI_V2_MAX_LIMIT,
  countHeader: 'fiware-total-count',
  queries: async () => [{ key: 'all' }],
  pageRequest(endpoint, _query, offset, limit, modifiedSince) {
    const since = modifiedSince ? `&q=${encodeURIComponent(`dateModified>${modifiedSince}`)}` : '';
    const url = `${endpoint.url}/v2/entities?limit=${limit}&offset=${offset}&options=${options(endpoint)}${since}`;
    return { url, headers: headers(endpoint) };
  },
  idsRequest(endpoint, ids) {
    const id = ids.map(encodeURIComponent).join(',');
    const url = `${endpoint.url}/v2/entities?id=${id}&limit=${NGSI_V2_MAX_LIMIT}&options=${options(endpoint)}`;
    return { url, headers: headers(endpoint) };
  },
  primaryScope: async () => ({ restricted: true, how: 'options=skipForwarding (its own entities, no forwarding)' }),
};

const subscriptionsUrl = (endpoint: BrokerEndpoint) => `${endpoint.url}/v2/subscriptions`;

function subscriptionBody(target: Parameters<SubscriptionProtocol['create']>[1]) {
  return {
    description: target.description,
    subject: {
      entities: [{ idPattern: '.*' }],
      condition: { alterationTypes: ['entityCreate', 'entityChange', 'entityDelete'] },
    },
    notification: {
      httpCustom: { url: target.url, headers: { [NOTIFY_TOKEN_HEADER]: target.token } },
      attrsFormat: 'normalized',
    },
    expires: new Date(target.expiresAt).toISOString(),
  };
}

export const ngsiV2Subscriptions: SubscriptionProtocol = {
  create: (endpoint, target) => ({
    url: subscriptionsUrl(endpoint),
    headers: headers(endpoint),
    body: subscriptionBody(target),
  }),
  createdId(res) {
    const location = res.headers.location;
    const raw = Array.isArray(location) ? location[0] : location;
    return raw ? /\/v2\/subscriptions\/([^/?#]+)/.exec(raw)?.[1] : undefined;
  },
  one: (endpoint, id) => ({
    url: `${subscriptionsUrl(endpoint)}/${encodeURIComponent(id)}`,
    headers: headers(endpoint),
  }),
  renew: (endpoint, id, target) => ({
    url: `${subscriptionsUrl(endpoint)}/${encodeURIComponent(id)}`,
    headers: headers(endpoint),
    body: { expires: new Date(target.expiresAt).toISOString() },
  }),
  list: (endpoint, offset, limit) => ({
    url: `${subscriptionsUrl(endpoint)}?limit=${limit}&offset=${offset}&options=count`,
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
