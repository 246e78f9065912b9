// A broker the watcher reads: where it is, which API it speaks, its tenant, and its role. The
// primary holds the reference data; federated brokers are compared against it.

export type BrokerApi = 'ngsi-v2' | 'ngsi-ld';
export type BrokerRole = 'primary' | 'federated';

export interface BrokerEndpoint {
  /** Normalized base URL (no credentials, no trailing slash): also the broker's name in records. */
  url: string;
  role: BrokerRole;
  api: BrokerApi;
  /** Tenant: `Fiware-Service` (NGSI-v2) or `NGSILD-Tenant` (NGSI-LD). */
  service?: string | undefined;
  /** `Fiware-ServicePath` (NGSI-v2 only); absent means every path of the tenant. */
  servicePath?: string | undefined;
  /** `X-Auth-Token` for a broker behind a PEP proxy. Never logged. */
  authToken?: string | undefined;
  /** NGSI-LD `@context` sent in the `Link` header (default: the core context). */
  ldContext?: string | undefined;
}

export const NGSI_LD_CORE_CONTEXT = 'https://uri.etsi.org/ngsi-ld/v1/ngsi-ld-core-context.jsonld';

/**
 * The canonical form of a broker base URL, or an error message: http(s) only, no credentials,
 * query or fragment; the path kept without its trailing slash (a broker may sit under a prefix).
 * @example normalizeBrokerUrl('https://orion.example:1026/') // 'https://orion.example:1026'
 */
export function normalizeBrokerUrl(raw: string): string | { error: string } {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { error: `not a URL: ${JSON.stringify(raw.trim().slice(0, 100))}` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: `want http or https, not ${u.protocol}` };
  if (u.username || u.password) return { error: 'credentials in a broker URL are not allowed (use the token setting)' };
  if (u.search || u.hash) return { error: 'a broker URL takes no query or fragment' };
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** How one API pages its entity listing. */
export interface ListingProtocol {
  maxLimit: number;
  /** Lower-case response header carrying the total. */
  countHeader: string;
  pageRequest(
    endpoint: BrokerEndpoint,
    offset: number,
    limit: number,
  ): { url: string; headers: Record<string, string> };
}
