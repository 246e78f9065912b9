// Reads every entity of one broker, page by page, and proves the read complete and consistent:
// the count header is present on every page and never moves, pages are full until the last, and
// no entity comes twice. Anything else is a BrokerReadError; a listing that changed under the read
// is read again (up to `attempts` times) before giving up. Nothing is returned from a partial read,
// so a broker that is down or answers garbage is never mistaken for one whose entities were deleted.
import type { BrokerEndpoint, ListingProtocol } from './endpoint.ts';
import type { BrokerHttp } from './http-client.ts';
import { ngsiLdListing } from './ngsi-ld.ts';
import { ngsiV2Listing } from './ngsi-v2.ts';
import { entityKey, type ObservedEntity, ObserveError, observeEntity } from './observe.ts';
import { BrokerReadError } from './read-error.ts';

export interface ReadOptions {
  /** Entities per page (default and maximum: the API's limit, 1000). */
  pageSize?: number;
  /** Whole reads tried when the listing changes under the read (default 2). */
  attempts?: number;
}

export const listingFor = (endpoint: BrokerEndpoint): ListingProtocol =>
  endpoint.api === 'ngsi-v2' ? ngsiV2Listing : ngsiLdListing;

function parseCount(broker: string, header: string | string[] | undefined, name: string): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim()))
    throw new BrokerReadError(broker, 'malformed', `missing or invalid ${name} header`);
  return Number(raw.trim());
}

async function readOnce(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  pageSize: number,
  onPage: (entities: ObservedEntity[]) => void,
): Promise<void> {
  const protocol = listingFor(endpoint);
  const broker = endpoint.url;
  const seen = new Set<string>();
  let total: number | undefined;
  for (let offset = 0; ; offset += pageSize) {
    const req = protocol.pageRequest(endpoint, offset, pageSize);
    const res = await http.get(broker, req.url, req.headers);
    const count = parseCount(broker, res.headers[protocol.countHeader], protocol.countHeader);
    if (total === undefined) total = count;
    else if (count !== total)
      throw new BrokerReadError(broker, 'inconsistent', `total moved from ${total} to ${count} during the read`);
    let body: unknown;
    try {
      body = JSON.parse(res.text);
    } catch {
      throw new BrokerReadError(broker, 'malformed', `page at offset ${offset} is not JSON`);
    }
    if (!Array.isArray(body))
      throw new BrokerReadError(broker, 'malformed', `page at offset ${offset} is not an array`);
    if (body.length > pageSize)
      throw new BrokerReadError(
        broker,
        'malformed',
        `page at offset ${offset} has ${body.length} > ${pageSize} entities`,
      );
    const page: ObservedEntity[] = [];
    for (const raw of body) {
      let entity: ObservedEntity;
      try {
        entity = observeEntity(endpoint.api, raw);
      } catch (err) {
        if (err instanceof ObserveError) throw new BrokerReadError(broker, 'malformed', err.message);
        throw err;
      }
      const key = entityKey(entity.type, entity.id);
      if (seen.has(key)) throw new BrokerReadError(broker, 'inconsistent', `entity ${entity.id} listed twice`);
      seen.add(key);
      page.push(entity);
    }
    const expected = Math.min(pageSize, Math.max(0, total - offset));
    if (body.length !== expected)
      throw new BrokerReadError(
        broker,
        'inconsistent',
        `page at offset ${offset} has ${body.length} entities, the count says ${expected}`,
      );
    onPage(page);
    if (offset + pageSize >= total) return;
  }
}

/**
 * Streams every entity of one broker, page by page, to `onPage`. What `onPage` received is provisional:
 * it counts only when the promise resolves. On a rejection (BrokerReadError) the caller drops it; on
 * a listing that moved, `onRestart` is called and the read starts over.
 */
export async function readBrokerPages(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  onPage: (entities: ObservedEntity[]) => void,
  options: ReadOptions & { onRestart?: () => void } = {},
): Promise<void> {
  const protocol = listingFor(endpoint);
  const pageSize = Math.min(options.pageSize ?? protocol.maxLimit, protocol.maxLimit);
  const attempts = options.attempts ?? 2;
  for (let attempt = 1; ; attempt++) {
    try {
      await readOnce(http, endpoint, pageSize, onPage);
      return;
    } catch (err) {
      if (!(err instanceof BrokerReadError) || err.reason !== 'inconsistent' || attempt >= attempts) throw err;
      options.onRestart?.();
    }
  }
}

/** Every entity of one broker, or a BrokerReadError. @example const entities = await readBroker(http, primary); */
export async function readBroker(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  options: ReadOptions = {},
): Promise<ObservedEntity[]> {
  let out: ObservedEntity[] = [];
  await readBrokerPages(http, endpoint, (page) => out.push(...page), {
    ...options,
    onRestart: () => {
      out = [];
    },
  });
  return out;
}
