// Reads every entity of one broker, page by page, and proves the read complete and consistent:
// the count header is present on every page of a query and never moves, pages are full until the last, and
// no entity comes twice. Anything else is a BrokerReadError; a listing that changed under the read
// is read again (up to `attempts` times) before giving up. Nothing is returned from a partial read,
// so a broker that is down or answers garbage is never mistaken for one whose entities were deleted.
//
// A read is one query (NGSI-v2) or one per group of entity types (NGSI-LD, ngsi-ld.ts); an entity of several types
// is listed by each query naming one of them and is kept in the first (`ownerQuery`).
//
// Entities are judged one by one: an entity whose bytes are JSON but not an entity any broker would send (no id, a
// bad type, an attribute of no known shape) is reported (`UnreadableEntity`, with its id when it has one) and
// skipped, and the rest of the broker is still read. A page that is not JSON, not an array, or holds more or fewer
// entities than its count says fails the read, as before: then nothing of the page can be trusted.
//
// Two levels: `readRawPages` streams the pages as bytes with the count checks (the watcher digests each
// page and looks into only those that changed since its last pass), `scanPage` locates and digests a page's
// entities so that only the ones whose bytes changed are parsed, each on its own; `readBrokerPages` and
// `readBroker` put them together.
import { digest64Bytes } from './digest.ts';
import type { BrokerEndpoint, ListingProtocol, ListingQuery } from './endpoint.ts';
import { BodyBuffer, type BrokerHttp } from './http-client.ts';
import { ngsiLdListing } from './ngsi-ld.ts';
import { ngsiV2Listing } from './ngsi-v2.ts';
import { entityKey, type ObservedEntity, ObserveError, observeEntity } from './observe.ts';
import { splitObjects } from './page-elements.ts';
import { BrokerReadError } from './read-error.ts';

export interface ReadOptions {
  /** Entities per page (default and maximum: the API's limit, 1000). */
  pageSize?: number;
  /** Whole reads tried when the listing changes under the read (default 2). */
  attempts?: number;
  /** Only entities modified after this time (ISO 8601): an incremental read (no count of what was deleted). */
  modifiedSince?: string;
}

/** One page of a listing, as received. */
export interface RawPage {
  /** The page's place: its query's key and its offset (the watcher remembers pages by it). */
  key: string;
  query: ListingQuery;
  /** The query's index in the read (an entity of several types belongs to the first query listing it). */
  queryIndex: number;
  offset: number;
  pageSize: number;
  /** The count header's total (the same on every page of one query). */
  total: number;
  /** Entities this page must hold: the page size, less on the last page. */
  expected: number;
  /** The page's bytes: valid until the promise of the `onPage` that received them has settled (BodyBuffer). */
  body: Buffer;
  /** The broker's clock when it answered (its Date header), when it sent one. */
  date?: string;
}

/** An entity of a listing that could not be read as one: reported, skipped. */
export interface UnreadableEntity {
  id: string | undefined;
  reason: string;
}

/** Where a read starts: a query's index and an offset in it. */
export interface ReadFrom {
  query: number;
  offset: number;
}

export const listingFor = (endpoint: BrokerEndpoint): ListingProtocol =>
  endpoint.api === 'ngsi-v2' ? ngsiV2Listing : ngsiLdListing;

/** The key of the page of `query` at `offset`. */
export const pageKey = (query: ListingQuery, offset: number): string => `${query.key}:${offset}`;

function parseCount(broker: string, header: string | string[] | undefined, name: string): number {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim()))
    throw new BrokerReadError(broker, 'malformed', `missing or invalid ${name} header`);
  return Number(raw.trim());
}

const pageSizeFor = (endpoint: BrokerEndpoint, options: ReadOptions) => {
  const protocol = listingFor(endpoint);
  return Math.min(options.pageSize ?? protocol.maxLimit, protocol.maxLimit);
};

/**
 * The index of the first query of the read that lists an entity of this type: for an NGSI-LD entity of several
 * types (comma-joined, observe.ts), the query it is kept in; its listings by the later queries are repeats.
 */
export function ownerQuery(queries: readonly ListingQuery[], type: string): number {
  if (queries.length <= 1) return 0;
  const types = type.split(',');
  for (let k = 0; k < queries.length; k++) if (queries[k]?.types?.some((t) => types.includes(t))) return k;
  return -1;
}

async function readOnce(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  queries: readonly ListingQuery[],
  pageSize: number,
  from: ReadFrom,
  modifiedSince: string | undefined,
  onPage: (page: RawPage) => void | Promise<void>,
): Promise<void> {
  const protocol = listingFor(endpoint);
  const broker = endpoint.url;
  // One buffer for every page of the read: a page's body is valid until its onPage has settled.
  const bodies = new BodyBuffer();
  for (let q = from.query; q < queries.length; q++) {
    const query = queries[q] as ListingQuery;
    let total: number | undefined;
    for (let offset = q === from.query ? from.offset : 0; ; offset += pageSize) {
      const req = protocol.pageRequest(endpoint, query, offset, pageSize, modifiedSince);
      const res = await http.get(broker, req.url, req.headers, bodies);
      const count = parseCount(broker, res.headers[protocol.countHeader], protocol.countHeader);
      if (total === undefined) total = count;
      else if (count !== total)
        throw new BrokerReadError(broker, 'inconsistent', `total moved from ${total} to ${count} during the read`);
      const expected = Math.min(pageSize, Math.max(0, total - offset));
      const date = res.headers.date;
      await onPage({
        key: pageKey(query, offset),
        query,
        queryIndex: q,
        offset,
        pageSize,
        total,
        expected,
        body: res.body,
        ...(typeof date === 'string' ? { date } : {}),
      });
      if (offset + pageSize >= total) break;
    }
  }
}

/**
 * Streams the pages of one broker's listing as bytes, with the count checks, and resolves with the read's queries.
 * What `onPage` received is provisional: it counts only when the promise resolves. `onPage` throws a
 * BrokerReadError for a page it finds malformed or inconsistent; on an inconsistent listing `onRestart` is called
 * and the read starts over (up to `attempts` reads). `queries` (a read's, to read it again from `from`) skips the
 * discovery of the queries; `queriesFound` hears of the queries before the first page.
 */
export async function readRawPages(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  onPage: (page: RawPage) => void | Promise<void>,
  options: ReadOptions & {
    from?: ReadFrom;
    onRestart?: () => void;
    queries?: readonly ListingQuery[];
    queriesFound?: (queries: readonly ListingQuery[]) => void;
  } = {},
): Promise<readonly ListingQuery[]> {
  const pageSize = pageSizeFor(endpoint, options);
  const attempts = options.attempts ?? 2;
  for (let attempt = 1; ; attempt++) {
    try {
      const queries = options.queries ?? (await listingFor(endpoint).queries(http, endpoint));
      options.queriesFound?.(queries);
      await readOnce(
        http,
        endpoint,
        queries,
        pageSize,
        options.from ?? { query: 0, offset: 0 },
        options.modifiedSince,
        onPage,
      );
      return queries;
    } catch (err) {
      if (!(err instanceof BrokerReadError) || err.reason !== 'inconsistent' || attempt >= attempts) throw err;
      options.onRestart?.();
    }
  }
}

/** The page as JSON: a BrokerReadError when it is not an array, or holds more entities than a page may. */
function pageArray(endpoint: BrokerEndpoint, page: RawPage): unknown[] {
  const broker = endpoint.url;
  let body: unknown;
  try {
    body = JSON.parse(page.body.toString('utf8'));
  } catch {
    throw new BrokerReadError(broker, 'malformed', `page at offset ${page.offset} is not JSON`);
  }
  if (!Array.isArray(body))
    throw new BrokerReadError(broker, 'malformed', `page at offset ${page.offset} is not an array`);
  if (body.length > page.pageSize)
    throw new BrokerReadError(
      broker,
      'malformed',
      `page at offset ${page.offset} has ${body.length} > ${page.pageSize} entities`,
    );
  if (body.length !== page.expected)
    throw new BrokerReadError(
      broker,
      'inconsistent',
      `page at offset ${page.offset} has ${body.length} entities, the count says ${page.expected}`,
    );
  return body;
}

/** One entity read, or why it cannot be (ObserveError: reported and skipped). */
function observeOrUnreadable(endpoint: BrokerEndpoint, raw: unknown): ObservedEntity | UnreadableEntity {
  try {
    return observeEntity(endpoint.api, raw);
  } catch (err) {
    if (err instanceof ObserveError) return { id: err.entityId, reason: err.message };
    throw err;
  }
}

export const isUnreadable = (e: ObservedEntity | UnreadableEntity): e is UnreadableEntity => 'reason' in e;

/**
 * The entities of one page, each read or unreadable; a BrokerReadError for a page that is not JSON, not an array
 * (malformed), or not as many entities as the page must hold (inconsistent).
 */
export function parsePage(endpoint: BrokerEndpoint, page: RawPage): Array<ObservedEntity | UnreadableEntity> {
  return pageArray(endpoint, page).map((raw) => observeOrUnreadable(endpoint, raw));
}

/** A page split into its entities' bytes (page-elements.ts), each digested as received, parsed one by one. */
export interface ScannedPage {
  /** Entities on the page (the count checks passed). */
  readonly count: number;
  /** 8 characters per entity, in listing order: a keyed digest of its bytes (digest.ts). */
  readonly raws: string;
  /** Entity k, parsed on its own, or why it cannot be read. */
  parse(k: number): ObservedEntity | UnreadableEntity;
}

/**
 * The page's entities located and digested without parsing them, or the BrokerReadError `parsePage` gives for
 * a page that is not an array of as many entities as it must hold.
 */
export function scanPage(endpoint: BrokerEndpoint, page: RawPage): ScannedPage {
  const broker = endpoint.url;
  const bounds = splitObjects(page.body);
  const count = bounds ? bounds.length / 2 : -1;
  if (!bounds || count !== page.expected) {
    pageArray(endpoint, page); // throws the exact error
    throw new BrokerReadError(broker, 'malformed', `page at offset ${page.offset} is not an array of entities`);
  }
  let raws = '';
  for (let k = 0; k < bounds.length; k += 2)
    raws += digest64Bytes(page.body, bounds[k] as number, bounds[k + 1] as number);
  return {
    count,
    // Flattened: a concatenation is a tree of pieces in V8, and the watcher keeps this string.
    raws: Buffer.from(raws, 'latin1').toString('latin1'),
    parse(k) {
      let raw: unknown;
      try {
        raw = JSON.parse(page.body.toString('utf8', bounds[2 * k], bounds[2 * k + 1]));
      } catch {
        // The page split into objects, but this one is not JSON: the page as a whole cannot be trusted.
        throw new BrokerReadError(broker, 'malformed', `page at offset ${page.offset} is not JSON`);
      }
      return observeOrUnreadable(endpoint, raw);
    },
  };
}

/** The error for an entity listed on two pages of one read (the listing moved under it). */
export const listedTwice = (broker: string, id: string) =>
  new BrokerReadError(broker, 'inconsistent', `entity ${id} listed twice`);

/**
 * Streams every entity of one broker, page by page, to `onPage` (the page's readable entities, and those that
 * are not). What `onPage` received is provisional: it counts only when the promise resolves. On a rejection
 * (BrokerReadError) the caller drops it; on a listing that moved, `onRestart` is called and the read starts over.
 */
export async function readBrokerPages(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  onPage: (entities: ObservedEntity[], unreadable: UnreadableEntity[]) => void,
  options: ReadOptions & { onRestart?: () => void } = {},
): Promise<void> {
  let seen = new Set<string>();
  let queries: readonly ListingQuery[] = [];
  const protocol = listingFor(endpoint);
  await readRawPages(
    http,
    endpoint,
    (page) => {
      const entities: ObservedEntity[] = [];
      const unreadable: UnreadableEntity[] = [];
      for (const e of parsePage(endpoint, page)) {
        if (isUnreadable(e)) {
          unreadable.push(e);
          continue;
        }
        if (ownerQuery(queries, e.type) < page.queryIndex) continue;
        const key = entityKey(e.type, e.id);
        if (seen.has(key)) throw listedTwice(endpoint.url, e.id);
        seen.add(key);
        entities.push(e);
      }
      onPage(entities, unreadable);
    },
    {
      ...options,
      queries: await protocol.queries(http, endpoint).then((q) => {
        queries = q;
        return q;
      }),
      onRestart: () => {
        seen = new Set();
        options.onRestart?.();
      },
    },
  );
}

/**
 * Every entity of one broker, or a BrokerReadError; the entities it could not read are skipped and handed to
 * `onUnreadable`. @example const entities = await readBroker(http, primary);
 */
export async function readBroker(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  options: ReadOptions & { onUnreadable?: (e: UnreadableEntity) => void } = {},
): Promise<ObservedEntity[]> {
  let out: ObservedEntity[] = [];
  let skipped: UnreadableEntity[] = [];
  await readBrokerPages(
    http,
    endpoint,
    (page, unreadable) => {
      out.push(...page);
      skipped.push(...unreadable);
    },
    {
      ...options,
      onRestart: () => {
        out = [];
        skipped = [];
      },
    },
  );
  for (const e of skipped) options.onUnreadable?.(e);
  return out;
}
