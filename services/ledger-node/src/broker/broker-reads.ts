// Reading the brokers, beside listing.ts's paging: the entities a notification named, read again by id (one
// listing request per batch of ids); each broker's clock when its last read began, from which an incremental
// sweep asks for what was modified; and a read's account of the entities it could not read, which forbids
// deciding anything about them that pass.
import { DIGEST64_CHARS } from './digest.ts';
import type { BrokerEndpoint } from './endpoint.ts';
import type { BrokerHttp } from './http-client.ts';
import { isUnreadable, listingFor, type RawPage, scanPage, type UnreadableEntity } from './listing.ts';
import { entityKey, type ObservedEntity } from './observe.ts';
import type { Now } from './ports.ts';
import { BrokerReadError } from './read-error.ts';

/** Entities reported unreadable per broker and pass; more, and the broker's read fails (malformed). */
const MAX_UNREADABLE = 10_000;
/** An incremental sweep asks for entities modified since the last sweep began by the broker's clock, less this. */
export const SWEEP_OVERLAP_MS = 60_000;

/** Per broker and pass: the entities it could not read, and what that forbids deciding. */
export interface Unreadable {
  list: UnreadableEntity[];
  ids: Set<string>;
  /** Some had no id: what is missing on that side cannot be told this pass. */
  anonymous: boolean;
}

export const noUnreadable = (): Unreadable => ({ list: [], ids: new Set(), anonymous: false });

/** Forgets what a read found unreadable (the read starts over). */
export function clearUnreadable(u: Unreadable): void {
  u.list.length = 0;
  u.ids.clear();
  u.anonymous = false;
}

/** Notes an entity the read could not read; throws (the read fails, malformed) past MAX_UNREADABLE. */
export function noteUnreadable(endpoint: BrokerEndpoint, into: Unreadable, e: UnreadableEntity): void {
  if (into.list.length >= MAX_UNREADABLE)
    throw new BrokerReadError(endpoint.url, 'malformed', `more than ${MAX_UNREADABLE} entities cannot be read`);
  into.list.push(e);
  if (e.id === undefined) into.anonymous = true;
  else into.ids.add(e.id);
}

/** An entity read by id: its fields, and its bytes' digest at `raws[at]` (listing.ts's ScannedPage). */
export interface ReadEntity {
  e: ObservedEntity;
  raws: string;
  at: number;
}

/**
 * The entities with these ids on one broker, read now, by entity key (one listing request for the ids; an id
 * holding a comma cannot be one of a list, so such ids are asked for one at a time). An entity the broker lists
 * but that cannot be read is left out (the sweep reports it), and so is one that was not asked for.
 */
export async function readIds(
  http: BrokerHttp,
  endpoint: BrokerEndpoint,
  ids: readonly string[],
): Promise<Map<string, ReadEntity>> {
  const out = new Map<string, ReadEntity>();
  const protocol = listingFor(endpoint);
  const plain = ids.filter((id) => !id.includes(','));
  const groups = [plain, ...ids.filter((id) => id.includes(',')).map((id) => [id])];
  for (const group of groups) {
    if (group.length === 0) continue;
    const req = protocol.idsRequest(endpoint, group);
    const res = await http.get(endpoint.url, req.url, req.headers);
    const raw = res.headers[protocol.countHeader];
    const total = Number(Array.isArray(raw) ? raw[0] : raw);
    if (!Number.isSafeInteger(total)) throw new BrokerReadError(endpoint.url, 'malformed', 'no count');
    const page: RawPage = {
      key: 'ids',
      query: { key: 'ids' },
      queryIndex: 0,
      offset: 0,
      pageSize: protocol.maxLimit,
      total,
      expected: Math.min(total, protocol.maxLimit),
      body: res.body,
    };
    const scan = scanPage(endpoint, page);
    for (let k = 0; k < scan.count; k++) {
      const e = scan.parse(k);
      if (isUnreadable(e)) continue; // left to the sweep, which reports it
      if (!group.includes(e.id)) continue; // a broker naming what was not asked for is not believed
      out.set(entityKey(e.type, e.id), { e, raws: scan.raws, at: DIGEST64_CHARS * k });
    }
  }
  return out;
}

/**
 * Per broker, its clock when its last read began (incremental sweeps start from it, less SWEEP_OVERLAP_MS), and
 * whether it refused an incremental read (then it is always read completely).
 */
export class ReadClocks {
  private readonly clock = new Map<string, number>();
  private readonly noIncremental = new Set<string>();
  private readonly now: Now;

  constructor(now: Now) {
    this.now = now;
  }

  /**
   * Notes the broker's clock from the first answer of a read (`noted`: the brokers this read has noted): its Date
   * header, or (a broker that sends none, as Scorpio 5.0.3) this node's clock, which SWEEP_OVERLAP_MS of overlap
   * covers for a skew up to a minute.
   */
  note(endpoint: BrokerEndpoint, page: RawPage, noted: Set<string>): void {
    if (noted.has(endpoint.url)) return;
    noted.add(endpoint.url);
    const at = page.date === undefined ? Number.NaN : Date.parse(page.date);
    this.clock.set(endpoint.url, Number.isNaN(at) ? this.now() : at);
  }

  /** Since when an incremental read of the broker asks for modified entities (ISO 8601), if it was read before. */
  modifiedSince(endpoint: BrokerEndpoint): string | undefined {
    const clock = this.clock.get(endpoint.url);
    return clock === undefined ? undefined : new Date(clock - SWEEP_OVERLAP_MS).toISOString();
  }

  /** An incremental read failed: if the broker refused it (an HTTP status), it is read completely from now on. */
  incrementalFailed(endpoint: BrokerEndpoint, err: unknown): void {
    if (err instanceof BrokerReadError && err.reason === 'http_status') this.noIncremental.add(endpoint.url);
  }

  /** Whether every one of these brokers can be read incrementally (read before, and never refusing it). */
  incrementalAble(brokers: readonly BrokerEndpoint[]): boolean {
    return brokers.every((b) => this.clock.has(b.url) && !this.noIncremental.has(b.url));
  }
}
