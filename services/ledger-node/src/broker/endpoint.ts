// A broker the watcher reads: where it is, which API it speaks, its tenant, and its role. The
// primary holds the reference data; federated brokers are compared against it.
import type { BrokerHttp, BrokerResponse } from './http-client.ts';

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

/** One query of a complete read: NGSI-v2 lists everything at once, NGSI-LD one group of entity types a query. */
export interface ListingQuery {
  /** Tells the queries of one read apart (the watcher remembers pages by query and offset). */
  key: string;
  /** NGSI-LD: the entity types this query lists. */
  types?: readonly string[];
}

/** Whether the primary's listing holds its own data only, and how that is known. */
export interface PrimaryScope {
  restricted: boolean;
  how: string;
}

/** How one API lists entities. */
export interface ListingProtocol {
  maxLimit: number;
  /** Lower-case response header carrying the total. */
  countHeader: string;
  /** The queries of one complete read (NGSI-LD discovers the entity types first). */
  queries(http: BrokerHttp, endpoint: BrokerEndpoint): Promise<ListingQuery[]>;
  /** One page of a query; with `modifiedSince` (ISO 8601), only entities modified after it. */
  pageRequest(
    endpoint: BrokerEndpoint,
    query: ListingQuery,
    offset: number,
    limit: number,
    modifiedSince?: string,
  ): { url: string; headers: Record<string, string> };
  /** A listing of the entities with these ids (at most `maxLimit`; no id holds a comma). */
  idsRequest(endpoint: BrokerEndpoint, ids: readonly string[]): { url: string; headers: Record<string, string> };
  /** Whether the primary's listing is its own data only (`types`: those a read of it listed). */
  primaryScope(http: BrokerHttp, endpoint: BrokerEndpoint, types: readonly string[]): Promise<PrimaryScope>;
}

/** One request of the subscriptions' management. */
export interface SubscriptionRequest {
  url: string;
  headers: Record<string, string>;
  body?: unknown;
}

/** What a subscription of this node asks for. */
export interface SubscriptionTarget {
  /** Where the broker notifies (this node's notification route, with its channel). */
  url: string;
  /** The subscription's secret, sent back in NOTIFY_TOKEN_HEADER. */
  token: string;
  /** Names the node, so that it finds its own subscriptions again (and only those). */
  description: string;
  /** Expiry (ms since the epoch); the node renews well before. */
  expiresAt: number;
  /** NGSI-LD: the entity types to subscribe to (a subscription names them). */
  types: readonly string[];
}

/** How one API manages subscriptions: every entity of the endpoint's tenant, notified to this node. */
export interface SubscriptionProtocol {
  create(endpoint: BrokerEndpoint, target: SubscriptionTarget): SubscriptionRequest;
  /** The new subscription's id, from the create answer. */
  createdId(res: BrokerResponse): string | undefined;
  /** GET (check) and DELETE of one subscription. */
  one(endpoint: BrokerEndpoint, id: string): SubscriptionRequest;
  /** PATCH: a new expiry (and NGSI-LD: the entity types). */
  renew(endpoint: BrokerEndpoint, id: string, target: SubscriptionTarget): SubscriptionRequest;
  /** A page of the tenant's subscriptions, and how to read one. */
  list(endpoint: BrokerEndpoint, offset: number, limit: number): SubscriptionRequest;
  listed(body: Buffer): Array<{ id: string; description: string | undefined }>;
}
