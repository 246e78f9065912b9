// One pass (a sweep, in subscribe mode): the primary read completely, or what was modified, into the primary
// state (under the state lock: notified entities change it too); then each federated broker the same way, page
// by page as listing.ts pages it, each page handed to the comparer (comparer.ts) and its records to the submitter
// (submitter.ts). A federated broker's records are kept until its read is complete (never recorded from a partial
// read) up to the buffer's size; past that its read goes on validating only, and a second read from the page
// where the buffer filled judges and hands over page by page. After a complete read: the entities gone since the
// last, and the primary's entities the federated broker lacks. A broker whose read fails records nothing this
// pass; each read's outcome goes to the brokers' status (status.ts).
import { clearUnreadable, noteUnreadable, noUnreadable, type ReadClocks, type Unreadable } from './broker-reads.ts';
import { type Comparer, type LookContext, scopeOf } from './comparer.ts';
import type { WatcherConfig } from './config.ts';
import { digestBytes } from './digest.ts';
import type { BrokerEndpoint, ListingQuery } from './endpoint.ts';
import { EntitySet } from './entities.ts';
import type { FederatedState } from './federated.ts';
import { listedTwice, listingFor, type RawPage, type ReadFrom, readRawPages, scanPage } from './listing.ts';
import type { ObservationMemory } from './memory.ts';
import type { Mutex } from './mutex.ts';
import type { BrokerHttp, Stopping, WatchLog } from './ports.ts';
import { isEntity, type PrimaryState } from './primary.ts';
import { BrokerReadError } from './read-error.ts';
import type { ObservationRecord } from './record.ts';
import type { BrokerStatuses, PassResult } from './status.ts';
import { SUBMIT_SLICE, type Submitter, tamperedFirst } from './submitter.ts';
import type { Subscriber } from './subscriber.ts';

/** Records of one broker kept until its read is complete; beyond, a second read hands them over page by page. */
export const BUFFER_MAX = 32_768;

export interface SweepDeps {
  config: WatcherConfig;
  http: BrokerHttp;
  memory: ObservationMemory;
  primary: PrimaryState;
  /** Each federated broker's state, by URL. */
  federated: ReadonlyMap<string, FederatedState>;
  comparer: Comparer;
  submitter: Submitter;
  statuses: BrokerStatuses;
  clocks: ReadClocks;
  /** A change found on `endpoint` (entity `i`): missed-change accounting (subscribe mode). */
  missed(endpoint: BrokerEndpoint, i: number, result: PassResult): void;
  /** Subscribe mode: told the entity types each broker lists. */
  subscriber: Pick<Subscriber, 'setTypes'> | undefined;
  /** Held while the primary is read completely (notified entities change the same state). */
  stateLock: Mutex;
  /** Records of one broker kept until its read is complete (BUFFER_MAX unless the options say otherwise). */
  bufferMax: number;
  pageSize: number | undefined;
  log: WatchLog | undefined;
  stopping: Stopping;
}

export class Sweep {
  private readonly deps: SweepDeps;

  constructor(deps: SweepDeps) {
    this.deps = deps;
  }

  /** Reads and judges every broker into `result` (`primaryRead` false: the primary could not be read, nothing was). */
  async run(result: PassResult): Promise<void> {
    const { config, stateLock } = this.deps;
    const primaryUnreadable = noUnreadable();
    result.primaryRead = await stateLock.run(() => this.readPrimary(result, primaryUnreadable));
    if (result.primaryRead)
      for (const federated of config.federated) await this.compare(federated, result, primaryUnreadable);
  }

  /** Reads the primary (completely, or what was modified) into the primary state; false on failure. */
  private async readPrimary(result: PassResult, unreadable: Unreadable): Promise<boolean> {
    const { config, http, memory, primary, comparer, statuses, clocks, missed, subscriber, pageSize } = this.deps;
    const endpoint = config.primary;
    const full = result.kind === 'full';
    const baseline = primary.baseline;
    const noted = new Set<string>();
    let listed = 0;
    if (full) primary.beginRead();
    let queries: readonly ListingQuery[] = [];
    try {
      queries = await readRawPages(
        http,
        endpoint,
        (page) => {
          clocks.note(endpoint, page, noted);
          result.pages++;
          if (!full) {
            comparer.primaryChanges(endpoint, page, queries, result, unreadable);
            return;
          }
          const parsed = primary.page(endpoint, page, queries, {
            onUnreadable: (e) => noteUnreadable(endpoint, unreadable, e),
            onChanged: (i) => {
              if (baseline) missed(endpoint, i, result);
            },
          });
          if (parsed !== null) {
            result.parsedPages++;
            result.parsedEntities += parsed;
          }
        },
        {
          pageSize,
          ...(full ? {} : { modifiedSince: clocks.modifiedSince(endpoint) }),
          onRestart: () => {
            if (full) primary.beginRead();
            clearUnreadable(unreadable);
          },
          queriesFound: (q) => {
            queries = q;
          },
        },
      );
    } catch (err) {
      if (!full) clocks.incrementalFailed(endpoint, err);
      statuses.readFailed(endpoint, err);
      return false;
    }
    if (full) {
      for (const i of primary.endRead())
        if (baseline && !unreadable.ids.has(memory.entities.ref(i).id)) missed(endpoint, i, result);
      primary.baseline = true;
      for (const _ of primary.members()) listed++;
    }
    statuses.readOk(endpoint, full ? listed : undefined, unreadable);
    const types = queries.flatMap((q) => q.types ?? []);
    subscriber?.setTypes(endpoint.url, types);
    statuses.setScope(endpoint, await listingFor(endpoint).primaryScope(http, endpoint, types));
    return true;
  }

  /**
   * Reads one federated broker (completely, or what was modified) and hands over the records it needs; nothing
   * for a read that fails.
   */
  private async compare(endpoint: BrokerEndpoint, result: PassResult, primaryUnreadable: Unreadable): Promise<void> {
    const { http, memory, primary, comparer, submitter, statuses, clocks, missed, subscriber, bufferMax, pageSize } =
      this.deps;
    const scope = memory.scope(scopeOf(endpoint));
    const state = this.deps.federated.get(endpoint.url) as FederatedState;
    const memos = state.pages;
    const full = result.kind === 'full';
    const baseline = state.baseline;
    const noted = new Set<string>();
    const unreadable = noUnreadable();
    let listed = new EntitySet();
    let buffer: ObservationRecord[] = [];
    let overflowAt: ReadFrom | undefined;
    let digests = new Map<string, string>();
    const read = new Set<string>();
    let queries: readonly ListingQuery[] = [];
    const ctx: LookContext = {
      endpoint,
      scope,
      state,
      listed,
      result,
      baseline,
      queries,
      unreadable,
      primaryUnreadable,
    };
    const onPage = (page: RawPage) => {
      clocks.note(endpoint, page, noted);
      ctx.listed = listed;
      ctx.queries = queries;
      result.pages++;
      read.add(page.key);
      const digest = digestBytes(page.body);
      digests.set(page.key, digest);
      const memo = full ? memos.get(page.key) : undefined;
      if (memo && memo.digest === digest && memo.entities.length === page.expected && comparer.settled(scope, memo)) {
        for (const i of memo.entities)
          if (isEntity(i) && !listed.add(i)) throw listedTwice(endpoint.url, memory.entities.ref(i).id);
        return;
      }
      result.parsedPages++;
      const scan = scanPage(endpoint, page);
      if (overflowAt !== undefined) {
        comparer.lookInto(ctx, page, scan, memo, null); // validated; judged by the second read
        return;
      }
      const before = buffer.length;
      const numbers = comparer.lookInto(ctx, page, scan, memo, buffer);
      if (buffer.length > bufferMax) {
        buffer.length = before;
        overflowAt = { query: page.queryIndex, offset: page.offset };
        return;
      }
      if (full) memos.set(page.key, { digest, entities: numbers, raws: scan.raws });
    };
    try {
      await readRawPages(http, endpoint, onPage, {
        pageSize,
        ...(full ? {} : { modifiedSince: clocks.modifiedSince(endpoint) }),
        onRestart: () => {
          listed = new EntitySet();
          buffer = [];
          overflowAt = undefined;
          digests = new Map();
          read.clear();
          clearUnreadable(unreadable);
        },
        queriesFound: (q) => {
          queries = q;
        },
      });
    } catch (err) {
      if (!full) clocks.incrementalFailed(endpoint, err);
      statuses.readFailed(endpoint, err);
      return;
    }
    let entities: number | undefined;
    if (full) {
      for (const key of memos.keys()) if (!read.has(key)) memos.delete(key);
      entities = 0;
      for (const _ of listed.members(memory.entities.size)) entities++;
    }
    statuses.readOk(endpoint, entities, unreadable);
    subscriber?.setTypes(
      endpoint.url,
      queries.flatMap((q) => q.types ?? []),
    );
    await submitter.offer(tamperedFirst(buffer), result);
    buffer = [];
    if (full) {
      // Gone without a notification: entities seen before that this read did not list.
      if (baseline)
        for (const i of [...state.seenEntities()])
          if (!listed.has(i) && !unreadable.ids.has(memory.entities.ref(i).id)) {
            state.see(i, undefined);
            missed(endpoint, i, result);
          }
      state.baseline = true;
      // What the federated broker lacks: every primary entity it did not list (unless it could not read some
      // entity and cannot say which: then nothing is called missing this pass).
      if (!unreadable.anonymous) {
        let missing: ObservationRecord[] = [];
        for (const i of primary.members()) {
          if (listed.has(i) || unreadable.ids.has(memory.entities.ref(i).id)) continue;
          for (const r of comparer.judgeMissing(scope, i)) missing.push(r);
          if (missing.length >= SUBMIT_SLICE) {
            await submitter.offer(missing, result);
            missing = [];
          }
        }
        await submitter.offer(missing, result);
      }
    }
    if (overflowAt !== undefined) await this.secondRead(ctx, digests, queries, overflowAt);
  }

  /**
   * After a complete read whose records did not fit the buffer: reads the broker again from `from`, judging
   * each page whose bytes are those the complete read saw and handing its records over at once (a page that
   * changed since is left to the next pass). Ends quietly on a failure: the next pass goes on.
   */
  private async secondRead(
    ctx: LookContext,
    digests: Map<string, string>,
    queries: readonly ListingQuery[],
    from: ReadFrom,
  ): Promise<void> {
    const { http, comparer, submitter, clocks, pageSize, stopping, log } = this.deps;
    const { endpoint, state, result } = ctx;
    const full = result.kind === 'full';
    try {
      await readRawPages(
        http,
        endpoint,
        async (page) => {
          if (stopping()) throw new BrokerReadError(endpoint.url, 'inconsistent', 'watcher stopping');
          result.pages++;
          const digest = digestBytes(page.body);
          if (digests.get(page.key) !== digest) return;
          result.parsedPages++;
          const scan = scanPage(endpoint, page);
          const records: ObservationRecord[] = [];
          const memo = full ? state.pages.get(page.key) : undefined;
          const numbers = comparer.lookInto(
            { ...ctx, listed: new EntitySet(), baseline: false },
            page,
            scan,
            memo,
            records,
          );
          if (full) state.pages.set(page.key, { digest, entities: numbers, raws: scan.raws });
          await submitter.offer(tamperedFirst(records), result);
        },
        {
          from,
          attempts: 1,
          pageSize,
          queries,
          ...(full ? {} : { modifiedSince: clocks.modifiedSince(endpoint) }),
        },
      );
    } catch (err) {
      log?.debug({ broker: endpoint.url, err: (err as Error).message }, 'broker watcher: second read ended');
    }
  }
}
