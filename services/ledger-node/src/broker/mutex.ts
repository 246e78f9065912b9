// A promise chain that runs one task at a time: the watcher's state lock (a complete read of the primary and the
// judging of notified entities change the same state, one after the other).
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` once every task queued before it has settled; its result, or its error. */
  run<T>(task: () => Promise<T> | T): Promise<T> {
    const next = this.tail.then(task, task);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
