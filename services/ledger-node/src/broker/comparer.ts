// Comparing: entities read from the brokers judged against the primary and the memory of what the chain holds,
// into the records to hand over (verdict.ts's verdicts, notary.ts's records). A changed page's entities are
// numbered, checked for repeats, and only those whose bytes or primary counterpart changed are parsed and judged
// (memory.ts's settled keys); a remembered page whose every entity is settled is skipped whole. No I/O: the sweep
// (sweep.ts) and the judging of notified entities (notified-intake.ts) read the brokers and feed pages and
// entities here, and hand the records over.
import { noteUnreadable, type ReadEntity, type Unreadable } from './broker-reads.ts';
import { ABSENT, DIGEST64_CHARS } from './digest.ts';
import type { BrokerEndpoint, ListingQuery } from './endpoint.ts';
import type { EntitySet } from './entities.ts';
import type { FederatedState } from './federated.ts';
import { isUnreadable, listedTwice, ownerQuery, type RawPage, type ScannedPage, scanPage } from './listing.ts';
import type { ObservationMemory, ScopeMemory } from './memory.ts';
import { recordsFor } from './notary.ts';
import type { PendingEntity } from './notified-queue.ts';
import { entityKey, type ObservedEntity, splitEntityKey } from './observe.ts';
import { knownAt, type PageMemo, type PrimaryState, REPEATED, UNREADABLE } from './primary.ts';
import type { ObservationRecord, ObservationScope } from './record.ts';
import type { PassResult } from './status.ts';
import { allOk, entityDigest, judge } from './verdict.ts';

/** The memory's scope of a federated broker's records: its URL, tenant and service path. */
export const scopeOf = (endpoint: BrokerEndpoint): ObservationScope => ({
  broker: endpoint.url,
  service: endpoint.service,
  servicePath: endpoint.servicePath,
});

/** What judging one page of a federated broker needs. */
export interface LookContext {
  endpoint: BrokerEndpoint;
  scope: ScopeMemory;
  state: FederatedState;
  listed: EntitySet;
  result: PassResult;
  /** Whether a change found now is a missed one (a complete read of the broker was judged before). */
  baseline: boolean;
  queries: readonly ListingQuery[];
  unreadable: Unreadable;
  primaryUnreadable: Unreadable;
}

export interface ComparerDeps {
  memory: ObservationMemory;
  primary: PrimaryState;
  /** Each federated broker's state, by URL. */
  federated: ReadonlyMap<string, FederatedState>;
  /** A change found on `endpoint` (entity `i`): missed-change accounting (subscribe mode). */
  missed(endpoint: BrokerEndpoint, i: number, result: PassResult): void;
}

export class Comparer {
  private readonly memory: ObservationMemory;
  private readonly primary: PrimaryState;
  private readonly federated: ReadonlyMap<string, FederatedState>;
  private readonly missed: ComparerDeps['missed'];

  constructor(deps: ComparerDeps) {
    this.memory = deps.memory;
    this.primary = deps.primary;
    this.federated = deps.federated;
    this.missed = deps.missed;
  }

  /** An incremental read's page of the primary: every entity listed is parsed and set. */
  primaryChanges(
    endpoint: BrokerEndpoint,
    page: RawPage,
    queries: readonly ListingQuery[],
    result: PassResult,
    unreadable: Unreadable,
  ): void {
    const scan = scanPage(endpoint, page);
    result.parsedPages++;
    for (let k = 0; k < scan.count; k++) {
      const e = scan.parse(k);
      result.parsedEntities++;
      if (isUnreadable(e)) {
        noteUnreadable(endpoint, unreadable, e);
        continue;
      }
      if (ownerQuery(queries, e.type) < page.queryIndex) continue;
      const i = this.memory.entities.intern(e.type, e.id);
      if (this.primary.set(i, e)) this.missed(endpoint, i, result);
    }
  }

  /**
   * The entities of a page that changed: each numbered and listed (throws when one is listed twice in this
   * read), and judged, its records pushed to `out` (null: validated only). An entity whose bytes are those
   * listed at the same place last time needs no parse to be numbered, and no judging when it matched the chain
   * then and whose primary counterpart has not changed since (its settled key: its bytes' digest).
   */
  lookInto(
    ctx: LookContext,
    page: RawPage,
    scan: ScannedPage,
    memo: PageMemo | undefined,
    out: ObservationRecord[] | null,
  ): Uint32Array {
    const { endpoint, scope, state, listed, result } = ctx;
    const numbers = new Uint32Array(scan.count);
    for (let k = 0; k < scan.count; k++) {
      let i = knownAt(memo, scan.raws, k);
      const at = DIGEST64_CHARS * k;
      if (i >= 0) {
        if (!listed.add(i)) throw listedTwice(endpoint.url, this.memory.entities.ref(i).id);
        numbers[k] = i;
        if (out === null || this.memory.isSettled(scope, i, scan.raws, at)) continue;
      }
      const e = scan.parse(k);
      result.parsedEntities++;
      if (isUnreadable(e)) {
        numbers[k] = UNREADABLE;
        noteUnreadable(endpoint, ctx.unreadable, e);
        continue;
      }
      if (ownerQuery(ctx.queries, e.type) < page.queryIndex) {
        numbers[k] = REPEATED;
        continue;
      }
      if (i < 0) {
        i = this.memory.entities.intern(e.type, e.id);
        if (!listed.add(i)) throw listedTwice(endpoint.url, e.id);
        numbers[k] = i;
      }
      const digest = entityDigest(e);
      if (ctx.baseline && !state.sawAs(i, digest)) this.missed(endpoint, i, result);
      state.see(i, digest);
      if (out === null) continue;
      // Its primary counterpart could not be read this pass: nothing is decided about it.
      if (ctx.primaryUnreadable.ids.has(e.id)) continue;
      if (ctx.primaryUnreadable.anonymous && !this.primary.has(i)) continue;
      this.judge(scope, i, e, scan.raws, at, out);
    }
    return numbers;
  }

  /**
   * Judges one federated entity (its bytes' digest at `raws[at]`) against the primary and the memory; settles it
   * when nothing is to record.
   */
  judge(scope: ScopeMemory, i: number, e: ObservedEntity, raws: string, at: number, out: ObservationRecord[]): void {
    if (this.memory.isSettled(scope, i, raws, at)) return;
    const p = this.primary.entry(i);
    const observations = p && p.digest === entityDigest(e) ? allOk(e) : judge(p, e);
    const records = recordsFor(this.memory, scope, i, e, observations);
    if (records.length === 0) this.memory.settle(scope, i, raws, at);
    for (const r of records) out.push(r);
  }

  /** Records for a primary entity the federated broker does not list (TAMPERED, observed null). */
  judgeMissing(scope: ScopeMemory, i: number): ObservationRecord[] {
    if (!this.primary.has(i) || this.memory.isSettled(scope, i, ABSENT, 0)) return [];
    const p = this.primary.entry(i);
    const records = recordsFor(this.memory, scope, i, this.memory.entities.ref(i), judge(p, undefined));
    if (records.length === 0) this.memory.settle(scope, i, ABSENT, 0);
    return records;
  }

  /** True when every entity of a remembered page still matches the chain under the same bytes and primary. */
  settled(scope: ScopeMemory, memo: PageMemo): boolean {
    for (let k = 0; k < memo.entities.length; k++) {
      const i = memo.entities[k] as number;
      if (i === REPEATED) continue;
      if (i === UNREADABLE) return false;
      if (!this.memory.isSettled(scope, i, memo.raws, DIGEST64_CHARS * k)) return false;
    }
    return true;
  }

  /**
   * Notified entities, as just read by id from the primary (`onPrimary`) and from each of `federated`
   * (`onFederated`, in that order): every entity either side holds under the batch's ids, and those the
   * notifications named, set on the primary and judged on each federated broker; records pushed to `out`.
   */
  judgeNotified(
    federated: readonly BrokerEndpoint[],
    batch: readonly PendingEntity[],
    onPrimary: ReadonlyMap<string, ReadEntity>,
    onFederated: readonly ReadonlyMap<string, ReadEntity>[],
    out: ObservationRecord[],
  ): void {
    const keys = new Set<string>(batch.map((p) => entityKey(p.ref.type, p.ref.id)));
    for (const k of onPrimary.keys()) keys.add(k);
    for (const m of onFederated) for (const k of m.keys()) keys.add(k);
    for (const key of keys) {
      const { id, type } = splitEntityKey(key);
      const p = onPrimary.get(key);
      const i =
        p || onFederated.some((m) => m.has(key))
          ? this.memory.entities.intern(type, id)
          : this.memory.entities.find(type, id);
      if (i === undefined) continue;
      this.primary.set(i, p?.e);
      federated.forEach((f, n) => {
        const scope = this.memory.scope(scopeOf(f));
        const state = this.federated.get(f.url) as FederatedState;
        const got = (onFederated[n] as ReadonlyMap<string, ReadEntity>).get(key);
        state.see(i, got ? entityDigest(got.e) : undefined);
        if (got) this.judge(scope, i, got.e, got.raws, got.at, out);
        else for (const r of this.judgeMissing(scope, i)) out.push(r);
      });
    }
  }
}
