// The checkpoint and witness metrics of one node, on its registry. Gauges read the book when scraped, so they are
// never stale; the counters and the latency histogram are fed by the coordinator and the book.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CheckpointBook } from './book.ts';

export interface CheckpointMetrics {
  /** Submissions to a witness, by outcome: cosigned, size (409 with its size), refused_<status>, unreachable. */
  witnessRequests: Counter<'witness' | 'result'>;
  /** Checkpoint rounds this node coordinated, by outcome: cosigned (policy met), signed (log-signed only), no_quorum. */
  rounds: Counter<'result'>;
  /** Checkpoints from peers whose root differs from this node's at the same size (split views). */
  conflicts: Counter;
  /** From a block's finality on this node to a checkpoint covering it that the witness policy is met by. */
  witnessLatency: Histogram;
}

export function createCheckpointMetrics(registry: Registry, book: CheckpointBook): CheckpointMetrics {
  const registers = [registry];
  new Gauge({
    name: 'scriptorium_ledger_checkpoint_size',
    help: 'Size of the latest checkpoint this node holds (blocks it covers)',
    registers,
    collect() {
      this.set(book.latestSize);
    },
  });
  new Gauge({
    name: 'scriptorium_ledger_checkpoint_witnessed_size',
    help: 'Size of the latest checkpoint cosigned by the threshold of witnesses (0: none)',
    registers,
    collect() {
      this.set(book.witnessedSize);
    },
  });
  new Gauge({
    name: 'scriptorium_ledger_checkpoint_unwitnessed_seconds',
    help: 'Age of the oldest block no witnessed checkpoint covers (0: all covered, or no witnesses)',
    registers,
    collect() {
      const since = book.status().unwitnessed_since;
      this.set(since === null ? 0 : Math.max(0, (Date.now() - since) / 1000));
    },
  });
  new Gauge({
    name: 'scriptorium_ledger_witness_cosigned_size',
    help: 'Largest checkpoint size each witness cosigned',
    labelNames: ['witness'],
    registers,
    collect() {
      for (const w of book.status().witnesses) this.set({ witness: w.name }, w.size);
    },
  });
  new Gauge({
    name: 'scriptorium_ledger_witness_lag_blocks',
    help: "Blocks each witness's latest cosigned checkpoint does not cover",
    labelNames: ['witness'],
    registers,
    collect() {
      const status = book.status();
      for (const w of status.witnesses) this.set({ witness: w.name }, status.size - w.size);
    },
  });
  return {
    witnessRequests: new Counter({
      name: 'scriptorium_ledger_witness_requests_total',
      help: 'add-checkpoint requests to each witness, by outcome',
      labelNames: ['witness', 'result'],
      registers,
    }),
    rounds: new Counter({
      name: 'scriptorium_ledger_checkpoint_rounds_total',
      help: 'Checkpoint rounds this node coordinated, by outcome',
      labelNames: ['result'],
      registers,
    }),
    conflicts: new Counter({
      name: 'scriptorium_ledger_checkpoint_conflicts_total',
      help: "Checkpoints refused because their root is not this node's at their size (split views)",
      registers,
    }),
    witnessLatency: new Histogram({
      name: 'scriptorium_ledger_checkpoint_witness_latency_seconds',
      help: 'From a block’s finality on this node to a witnessed checkpoint covering it',
      buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60, 300],
      registers,
    }),
  };
}
