// Durable consensus state (lock, "already sent" votes): each persist appends one framed record
// and fsyncs before returning, so the driver may send only after `save` returns. On open the last
// intact record wins. The log is compacted to its last record once it grows past a threshold.
import { join } from 'node:path';
import { Wal } from './wal.ts';

const COMPACT_BYTES = 4 * 1024 * 1024;

export class StateStore<S> {
  private readonly wal: Wal;
  private last: S | undefined;

  private constructor(wal: Wal, last: S | undefined) {
    this.wal = wal;
    this.last = last;
  }

  static open<S>(dataDir: string, name = 'consensus-state.wal'): StateStore<S> {
    const { wal, records } = Wal.open(join(dataDir, name));
    const tail = records.at(-1);
    const last = tail ? (JSON.parse(tail.toString('utf8')) as S) : undefined;
    return new StateStore<S>(wal, last);
  }

  /** The last durable state, or undefined on a fresh node. */
  load(): S | undefined {
    return this.last;
  }

  /** Durably records the state (fsync) before returning. */
  save(state: S): void {
    const payload = Buffer.from(JSON.stringify(state), 'utf8');
    if (this.wal.bytes > COMPACT_BYTES) this.wal.rewrite([payload]);
    else this.wal.append(payload);
    this.last = state;
  }

  close(): void {
    this.wal.close();
  }
}
