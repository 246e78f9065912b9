// NGSI-v2 listing as Orion serves it: `GET /v2/entities?limit=&offset=&options=count` (limit at most
// 1000), the total in `Fiware-Total-Count`, the tenant in `Fiware-Service` and `Fiware-ServicePath`,
// `options=skipForwarding` on the primary (its own data, not what context providers would answer),
// `X-Auth-Token` for a broker behind a PEP proxy.
import type { BrokerEndpoint, ListingProtocol } from './endpoint.ts';

export const NGSI_V2_MAX_LIMIT = 1000;

export const ngsiV2Listing: ListingProtocol = {
  maxLimit: NGSI_V2_MAX_LIMIT,
  countHeader: 'fiware-total-count',
  pageRequest(endpoint: BrokerEndpoint, offset: number, limit: number) {
    const options = endpoint.role === 'primary' ? 'count,skipForwarding' : 'count';
    const url = `${endpoint.url}/v2/entities?limit=${limit}&offset=${offset}&options=${options}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (endpoint.service) headers['fiware-service'] = endpoint.service;
    if (endpoint.servicePath) headers['fiware-servicepath'] = endpoint.servicePath;
    if (endpoint.authToken) headers['x-auth-token'] = endpoint.authToken;
    return { url, headers };
  },
};
