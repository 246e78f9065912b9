// NGSI-LD listing (ETSI GS CIM 009): `GET /ngsi-ld/v1/entities?idPattern=.*&limit=&offset=&count=true`
// (a query needs a filter; `idPattern=.*` matches every entity, as ngsijs does), the total in
// `NGSILD-Results-Count`, the `@context` in a `Link` header with `Accept: application/json`, the
// tenant in `NGSILD-Tenant`, `local=true` on the primary (its own data, no forwarding to
// registered context sources), `X-Auth-Token` for a broker behind a PEP proxy.
import { type BrokerEndpoint, type ListingProtocol, NGSI_LD_CORE_CONTEXT } from './endpoint.ts';

export const NGSI_LD_MAX_LIMIT = 1000;

export const ngsiLdListing: ListingProtocol = {
  maxLimit: NGSI_LD_MAX_LIMIT,
  countHeader: 'ngsild-results-count',
  pageRequest(endpoint: BrokerEndpoint, offset: number, limit: number) {
    const query = new URLSearchParams({ idPattern: '.*', limit: String(limit), offset: String(offset), count: 'true' });
    if (endpoint.role === 'primary') query.set('local', 'true');
    const context = endpoint.ldContext ?? NGSI_LD_CORE_CONTEXT;
    const headers: Record<string, string> = {
      accept: 'application/json',
      link: `<${context}>; rel="http://www.w3.org/ns/json-ld#context"; type="application/ld+json"`,
    };
    if (endpoint.service) headers['ngsild-tenant'] = endpoint.service;
    if (endpoint.authToken) headers['x-auth-token'] = endpoint.authToken;
    return { url: `${endpoint.url}/ngsi-ld/v1/entities?${query}`, headers };
  },
};
