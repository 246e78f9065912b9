// What enters the mempool: records (POST /mempool from peers and clients, the broker watcher, the debug
// API's synthetic records) and validator changes (POST /membership, the debug API). New items are gossiped
// to the peers and wake a proposer waiting for work.
import { randomUUID } from 'node:crypto';
import type { IntegrityRecord, ValidatorChange } from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import { badRequest } from '../errors.ts';
import type { Mempool } from '../mempool/index.ts';
import type { NodeMetrics } from '../metrics.ts';
import type { Gossip } from '../network/gossip.ts';

/**
 * A gossiped record: an object with an `id`. The body came from JSON.parse, so every other field is
 * JSON already; this is the chain's IntegrityRecord rule without re-walking each value (hot path).
 */
const mempoolRecord = z.looseObject({ id: z.string().min(1).max(256) });

/** The same rule as `mempoolRecord`, without building a parse result (zod stays for the error message). */
function isMempoolRecord(r: unknown): r is IntegrityRecord {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return false;
  const id = (r as { id?: unknown }).id;
  return typeof id === 'string' && id.length >= 1 && id.length <= 256;
}

export interface IntakeDeps {
  mempool: Mempool;
  gossip: Gossip;
  metrics: Pick<NodeMetrics, 'mempoolSize'>;
  /** Told when new records or changes arrived (a waiting proposer may propose now). */
  onNewWork: () => void;
  /** Prefix of synthetic record ids (the node id). */
  nodeId: string;
  /** The active validator set of the next height (a change that does nothing against it is not taken). */
  activeSet: () => readonly string[];
}

export class MempoolIntake {
  private readonly deps: IntakeDeps;
  private submitCounter = 0;

  constructor(deps: IntakeDeps) {
    this.deps = deps;
  }

  /**
   * Adds records; throws a 400 NodeError naming the first malformed one (nothing is added then).
   * `relay` false when the records came from a peer's gossip (its origin already sent them to every peer).
   */
  addRecords(records: unknown[], relay = true): { accepted: number } {
    const parsed: IntegrityRecord[] = [];
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      // Hot path (every record of every submission and gossip): a plain check instead of a zod parse.
      if (isMempoolRecord(r)) {
        parsed.push(r);
        continue;
      }
      const issue = mempoolRecord.safeParse(r);
      throw badRequest(
        `malformed payload: records.${i}: ${issue.success ? 'invalid record' : issue.error.issues[0]?.message}`,
      );
    }
    const fresh = this.deps.mempool.add(parsed, relay);
    this.deps.metrics.mempoolSize.set(this.deps.mempool.size);
    if (relay) this.deps.gossip.records(fresh);
    if (fresh.length > 0) this.deps.onNewWork();
    return { accepted: fresh.length };
  }

  /** Adds validator changes not pending yet that still apply, and gossips the new ones at once. */
  addChanges(changes: ValidatorChange[]): { accepted: number } {
    const fresh = this.deps.mempool.addChanges(changes, this.deps.activeSet());
    if (fresh.length > 0) {
      this.deps.gossip.send('/membership', { changes: fresh });
      this.deps.onNewWork();
    }
    return { accepted: fresh.length };
  }

  /** `POST /admin/submit?count=N`: N synthetic records with unique ids (demo and tests). */
  addSynthetic(count: number): { accepted: number } {
    const now = Date.now();
    const records: IntegrityRecord[] = [];
    for (let i = 0; i < count; i++) {
      records.push({
        id: `synthetic-${this.deps.nodeId}-${now}-${this.submitCounter++}-${randomUUID().slice(0, 8)}`,
        entity: `urn:ngsi-ld:Synthetic:${i % 100}`,
        attribute: 'value',
        value: i,
        verdict: 'OK',
        observed_at: new Date(now).toISOString(),
      });
    }
    return this.addRecords(records);
  }
}
