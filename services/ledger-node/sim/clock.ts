/** Simulated time: a priority queue of callbacks ordered by (time, insertion). Nothing reads the wall clock. */
interface Entry {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class SimClock {
  now = 0;
  #seq = 0;
  #heap: Entry[] = [];
  executed = 0;

  /** Runs `fn` after `delayMs` of simulated time; returns a function that cancels it. */
  schedule(delayMs: number, fn: () => void): () => void {
    const entry: Entry = { at: this.now + Math.max(0, delayMs), seq: this.#seq++, fn, cancelled: false };
    this.#push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  get pending(): number {
    return this.#heap.length;
  }

  /** Runs events up to time `until` (inclusive), or until `maxEvents` ran; returns false if the budget ran out. */
  runUntil(until: number, maxEvents: number): boolean {
    let budget = maxEvents;
    while (this.#heap.length > 0 && (this.#heap[0] as Entry).at <= until) {
      if (budget-- <= 0) return false;
      const e = this.#pop();
      if (e.cancelled) continue;
      this.now = e.at;
      this.executed++;
      e.fn();
    }
    this.now = Math.max(this.now, until);
    return true;
  }

  #less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  #push(e: Entry): void {
    const h = this.#heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#less(h[i] as Entry, h[p] as Entry)) break;
      [h[i], h[p]] = [h[p] as Entry, h[i] as Entry];
      i = p;
    }
  }

  #pop(): Entry {
    const h = this.#heap;
    const top = h[0] as Entry;
    const last = h.pop() as Entry;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.#less(h[l] as Entry, h[m] as Entry)) m = l;
        if (r < h.length && this.#less(h[r] as Entry, h[m] as Entry)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as Entry, h[i] as Entry];
        i = m;
      }
    }
    return top;
  }
}
