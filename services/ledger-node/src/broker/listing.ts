// Reads every entity of one broker, page by page, and proves the read complete and consistent:
// the count header is present on every page and never moves, pages are full until the last, and
// no entity comes twice. Anything else is a BrokerReadError; a listing that changed under the read
// is read again (up to `attempts` times) before giving up. Nothing is returned from a partial read,
// so a broker that is down or answers garbage is never mistaken for one whose entities were deleted.
//
// Two levels: `readRawPages` streams the pages as bytes with the count checks (the watcher digests each
// page and looks into only those that changed since its last pass), `parsePage` turns one page into entities
// with the shape and length checks, and `scanPage` locates and digests a page's entities so that only the
// ones whose bytes changed are parsed; `readBrokerPages` and `readBroker` put them together.
import { digest64Bytes } from './digest.ts';
import type { BrokerEndpoint, ListingProtocol } from './endpoint.ts';
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
}

/** One page of a listing, as received. */
export interface RawPage {
  offset: number;
  pageSize: number;
  /** The count header's total (the same on every page of one read). */
  total: number;
  /** Entities this page must hold: the page size, less on the last page. */
  expected: number;
  /** The page's bytes: valid until the promise of the `onPage` that received them has settled (BodyBuffer). */
  body: Buffer;
}

export const listingFor = (endpoint: BrokerEndpoint): ListingProtocol =>
  endpoint.api === 'ngsi-v2' ? ngsiV2Listing : ngsiLdListing;

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

async function readOnce(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  pageSize: number,
  from: number,
  onPage: (page: RawPage) => void | Promise<void>,
): Promise<void> {
  const protocol = listingFor(endpoint);
  const broker = endpoint.url;
  let total: number | undefined;
  // One buffer for every page of the read: a page's body is valid until its onPage has settled.
  const bodies = new BodyBuffer();
  for (let offset = from; ; offset += pageSize) {
    const req = protocol.pageRequest(endpoint, offset, pageSize);
    const res = await http.get(broker, req.url, req.headers, bodies);
    const count = parseCount(broker, res.headers[protocol.countHeader], protocol.countHeader);
    if (total === undefined) total = count;
    else if (count !== total)
      throw new BrokerReadError(broker, 'inconsistent', `total moved from ${total} to ${count} during the read`);
    const expected = Math.min(pageSize, Math.max(0, total - offset));
    await onPage({ offset, pageSize, total, expected, body: res.body });
    if (offset + pageSize >= total) return;
  }
}

/**
 * Streams the pages of one broker's listing as bytes, from `from` (default 0), with the count checks. What
 * `onPage` received is provisional: it counts only when the promise resolves. `onPage` throws a BrokerReadError
 * for a page it finds malformed or inconsistent; on an inconsistent listing `onRestart` is called and the read
 * starts over (up to `attempts` reads).
 */
export async function readRawPages(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  onPage: (page: RawPage) => void | Promise<void>,
  options: ReadOptions & { from?: number; onRestart?: () => void } = {},
): Promise<void> {
  const pageSize = pageSizeFor(endpoint, options);
  const attempts = options.attempts ?? 2;
  for (let attempt = 1; ; attempt++) {
    try {
      await readOnce(http, endpoint, pageSize, options.from ?? 0, onPage);
      return;
    } catch (err) {
      if (!(err instanceof BrokerReadError) || err.reason !== 'inconsistent' || attempt >= attempts) throw err;
      options.onRestart?.();
    }
  }
}

/**
 * The entities of one page, or a BrokerReadError: not JSON, not an array, an entity of a shape no broker sends
 * (malformed), or not as many entities as the page must hold (inconsistent).
 */
export function parsePage(endpoint: BrokerEndpoint, page: RawPage): ObservedEntity[] {
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
  const entities: ObservedEntity[] = [];
  for (const raw of body) {
    try {
      entities.push(observeEntity(endpoint.api, raw));
    } catch (err) {
      if (err instanceof ObserveError) throw new BrokerReadError(broker, 'malformed', err.message);
      throw err;
    }
  }
  if (entities.length !== page.expected)
    throw new BrokerReadError(
      broker,
      'inconsistent',
      `page at offset ${page.offset} has ${entities.length} entities, the count says ${page.expected}`,
    );
  return entities;
}

/** A page split into its entities' bytes (page-elements.ts), each digested as received, parsed one by one. */
export interface ScannedPage {
  /** Entities on the page (the count checks passed). */
  readonly count: number;
  /** 8 characters per entity, in listing order: a keyed digest of its bytes (digest.ts). */
  readonly raws: string;
  /** Entity k, parsed on its own; a BrokerReadError when malformed. */
  parse(k: number): ObservedEntity;
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
    parsePage(endpoint, page); // throws the exact error
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
        throw new BrokerReadError(broker, 'malformed', `page at offset ${page.offset} is not JSON`);
      }
      try {
        return observeEntity(endpoint.api, raw);
      } catch (err) {
        if (err instanceof ObserveError) throw new BrokerReadError(broker, 'malformed', err.message);
        throw err;
      }
    },
  };
}

/** The error for an entity listed on two pages of one read (the listing moved under it). */
export const listedTwice = (broker: string, id: string) =>
  new BrokerReadError(broker, 'inconsistent', `entity ${id} listed twice`);

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
  let seen = new Set<string>();
  await readRawPages(
    http,
    endpoint,
    (page) => {
      const entities = parsePage(endpoint, page);
      for (const e of entities) {
        const key = entityKey(e.type, e.id);
        if (seen.has(key)) throw listedTwice(endpoint.url, e.id);
        seen.add(key);
      }
      onPage(entities);
    },
    {
      ...options,
      onRestart: () => {
        seen = new Set();
        options.onRestart?.();
      },
    },
  );
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
