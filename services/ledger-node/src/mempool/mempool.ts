// Pending integrity records and validator changes. A seen-id set (ids in the mempool, ids
// committed on the chain, and a bounded window of recently seen ids) stops gossip loops and the
// re-inclusion of committed records: `add` returns only the records that are new here, and only
// those are gossiped on. A record this node accepted itself (from a client or its watcher) is due to be
// gossiped again while it stays pending (`dueForRegossip`): its first gossip can be lost (a peer restarting,
// busy past the send's timeout, or over its in-flight cap), and until a proposer holds it, it waits here alone.
// It goes out again every NODE_MEMPOOL__REGOSSIP_AFTER_MS until a validator has taken it (`delivered`); then only
// a late safety net remains (that validator may restart before a block holds it), every REGOSSIP_LATE_FACTOR times
// as long. So a busy chain, whose gossip arrives, sends nothing twice.
import type { IntegrityRecord, ValidatorChange } from '@scriptorium/ledger-protocol';

/** A record a validator took is gossiped again only this many times NODE_MEMPOOL__REGOSSIP_AFTER_MS apart. */
export const REGOSSIP_LATE_FACTOR = 16;

interface Pending {
  record: IntegrityRecord;
  bytes: number;
  addedAt: number;
  /** When it is gossiped again if still pending (undefined: a peer's record, its origin sends it again). */
  regossipAt: number | undefined;
  /** The wait between its gossips: the setting's, or REGOSSIP_LATE_FACTOR times it once a validator took it. */
  regossipEvery: number;
}

export interface MempoolOptions {
  maxRecords: number;
  /**
   * This node's own records still pending this long after they arrived are due to be gossiped again
   * (NODE_MEMPOOL__REGOSSIP_AFTER_MS); 0 or unset = never.
   */
  regossipAfterMs?: number;
  /** True when the id is already in a finalized block. */
  isCommitted: (id: string) => boolean;
  now?: () => number;
}

const changeKey = (c: ValidatorChange) => `${c.action}:${c.validator}`;

/** A change still does something against `active`: an ADD of a key not in it, a REMOVE of one in it. */
const useful = (c: ValidatorChange, active: ReadonlySet<string>) =>
  c.action === 'ADD' ? !active.has(c.validator) : active.has(c.validator);

export class Mempool {
  private readonly records = new Map<string, Pending>();
  private readonly changes = new Map<string, ValidatorChange>();
  private readonly options: MempoolOptions;
  private readonly now: () => number;

  constructor(options: MempoolOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  get size(): number {
    return this.records.size;
  }

  get pendingChanges(): number {
    return this.changes.size;
  }

  /**
   * Adds records not seen before; returns the new ones (to gossip on). Drops what exceeds capacity. `own`: this node
   * accepted them itself (not from a peer's gossip), and gossips them again while they stay pending.
   */
  add(records: readonly IntegrityRecord[], own = true): IntegrityRecord[] {
    const fresh: IntegrityRecord[] = [];
    const at = this.now();
    const every = this.options.regossipAfterMs ?? 0;
    const regossipAt = own && every > 0 ? at + every : undefined;
    for (const record of records) {
      if (this.records.has(record.id) || this.options.isCommitted(record.id)) continue;
      if (this.records.size >= this.options.maxRecords) break;
      const bytes = JSON.stringify(record).length;
      this.records.set(record.id, { record, bytes, addedAt: at, regossipAt, regossipEvery: every });
      fresh.push(record);
    }
    return fresh;
  }

  /**
   * Records a validator took (it answered 2xx to their gossip): gossiped again only as a late safety net, every
   * REGOSSIP_LATE_FACTOR times the setting from their arrival on.
   */
  delivered(records: readonly IntegrityRecord[]): void {
    const late = REGOSSIP_LATE_FACTOR * (this.options.regossipAfterMs ?? 0);
    for (const r of records) {
      const p = this.records.get(r.id);
      if (p?.regossipAt === undefined) continue;
      if (p.regossipEvery === late) continue;
      p.regossipAt = Math.max(p.regossipAt, p.addedAt + late);
      p.regossipEvery = late;
    }
  }

  /**
   * This node's own pending records whose next gossip is due, oldest first, at most `max`; each is then due again
   * after its interval. A scan of the pool: called every few seconds,
   * not per record.
   */
  dueForRegossip(max: number): IntegrityRecord[] {
    const out: IntegrityRecord[] = [];
    const at = this.now();
    for (const p of this.records.values()) {
      if (out.length >= max) break;
      if (p.regossipAt === undefined || p.regossipAt > at) continue;
      out.push(p.record);
      p.regossipAt = at + p.regossipEvery;
    }
    return out;
  }

  /**
   * Adds validator changes not pending yet that still do something against `activeSet` (the next height's set);
   * returns the new ones. A copy gossiped after its block was final (a late relay) is dropped here: kept, it would
   * wait unused until the opposite change, and then be proposed again.
   */
  addChanges(changes: readonly ValidatorChange[], activeSet: readonly string[]): ValidatorChange[] {
    const fresh: ValidatorChange[] = [];
    const active = new Set(activeSet);
    for (const c of changes) {
      const key = changeKey(c);
      if (this.changes.has(key) || !useful(c, active)) continue;
      this.changes.set(key, c);
      fresh.push(c);
    }
    return fresh;
  }

  /** The oldest records up to the limits, left in place until their block is finalized. */
  take(maxRecords: number, maxBytes: number): IntegrityRecord[] {
    const out: IntegrityRecord[] = [];
    let bytes = 0;
    for (const p of this.records.values()) {
      if (out.length >= maxRecords || bytes + p.bytes > maxBytes) break;
      out.push(p.record);
      bytes += p.bytes;
    }
    return out;
  }

  /** Pending validator changes whose effect is still meaningful against `activeSet`. */
  takeChanges(activeSet: readonly string[], max: number): ValidatorChange[] {
    const active = new Set(activeSet);
    const out: ValidatorChange[] = [];
    for (const [key, c] of this.changes) {
      if (!useful(c, active)) {
        this.changes.delete(key);
        continue;
      }
      out.push(c);
      if (out.length >= max) break;
    }
    return out;
  }

  /** Removes what a finalized block included; returns the mempool ages (ms) of the removed records. */
  removeCommitted(records: readonly IntegrityRecord[], changes: readonly ValidatorChange[]): number[] {
    const ages: number[] = [];
    const at = this.now();
    for (const r of records) {
      const p = this.records.get(r.id);
      if (p) {
        ages.push(at - p.addedAt);
        this.records.delete(r.id);
      }
    }
    for (const c of changes) this.changes.delete(changeKey(c));
    return ages;
  }
}
