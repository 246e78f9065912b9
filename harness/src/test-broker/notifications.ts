// What both APIs' subscriptions share: the subscription records a broker keeps (per tenant, with their counters
// and expiry), and the delivery of notifications as Orion and Scorpio do it — an HTTP POST after the write has
// answered, one attempt, no retry (a failure only counts in the subscription's `timesFailed`), a bounded queue
// (a full queue drops, as Orion's notification queue does) and a bounded number of deliveries in flight.
import { Agent, request } from 'undici';
import type { ChangeKind, StoredEntity } from './store.ts';

export interface StoredSubscription {
  id: string;
  tenant: string;
  /** NGSI-v2: the service paths it covers (undefined: every path). */
  servicePaths?: Array<{ path: string; recursive: boolean }> | undefined;
  /** Whether a change of this entity is one it notifies. */
  matches(entity: StoredEntity, kind: ChangeKind): boolean;
  url: string;
  /** Headers of every notification (custom headers, receiver info, tenant). */
  headers: Record<string, string>;
  /** Expiry, ms since the epoch (undefined: never). */
  expiresAt: number | undefined;
  /** The subscription as the API shows it (without its counters). */
  view: Record<string, unknown>;
  timesSent: number;
  timesFailed: number;
  lastNotification?: number;
  lastSuccess?: number;
  lastFailure?: number;
}

export interface NotifierOptions {
  /** CA bundle for HTTPS receivers (a node serving TLS with a private CA). */
  ca?: Buffer | undefined;
  /** Deliveries in flight at once (default 64). */
  concurrency?: number;
  /** Notifications waiting to be sent; more are dropped (default 100,000). */
  maxQueue?: number;
  /** Per delivery (default 5 s). */
  timeoutMs?: number;
}

interface Delivery {
  subscription: StoredSubscription;
  body: string;
}

/** The subscriptions of one broker (every tenant) and their deliveries. */
export class Subscriptions {
  private readonly byId = new Map<string, StoredSubscription>();
  private readonly queue: Delivery[] = [];
  private inFlight = 0;
  private readonly agent: Agent;
  private readonly concurrency: number;
  private readonly maxQueue: number;
  private readonly timeoutMs: number;
  private idleWaiters: Array<() => void> = [];
  /** Notifications dropped because the queue was full. */
  dropped = 0;

  constructor(options: NotifierOptions = {}) {
    this.concurrency = options.concurrency ?? 64;
    this.maxQueue = options.maxQueue ?? 100_000;
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.agent = new Agent({
      connections: this.concurrency,
      connect: options.ca ? { ca: options.ca } : {},
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  add(subscription: StoredSubscription): void {
    this.byId.set(subscription.id, subscription);
  }

  /** The subscription, when it exists in that tenant. */
  get(tenant: string, id: string): StoredSubscription | undefined {
    const s = this.byId.get(id);
    return s && s.tenant === tenant ? s : undefined;
  }

  delete(tenant: string, id: string): boolean {
    return this.get(tenant, id) !== undefined && this.byId.delete(id);
  }

  /** The subscriptions of a tenant, in creation order. */
  list(tenant: string): StoredSubscription[] {
    return [...this.byId.values()].filter((s) => s.tenant === tenant);
  }

  /** Forgets every subscription (a broker restarted without them). */
  clear(): void {
    this.byId.clear();
  }

  get size(): number {
    return this.byId.size;
  }

  /** Queues a notification to every live subscription of the tenant that matches the change. */
  changed(tenant: string, entity: StoredEntity, kind: ChangeKind, render: (s: StoredSubscription) => string): void {
    const now = Date.now();
    for (const s of this.byId.values()) {
      if (s.tenant !== tenant || (s.expiresAt !== undefined && s.expiresAt <= now)) continue;
      if (!s.matches(entity, kind)) continue;
      if (this.queue.length >= this.maxQueue) {
        this.dropped++;
        continue;
      }
      this.queue.push({ subscription: s, body: render(s) });
    }
    this.pump();
  }

  /** Resolves when nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.queue.length = 0;
    await this.agent.close();
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const d = this.queue.shift() as Delivery;
      this.inFlight++;
      this.deliver(d).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.queue.length === 0 && this.inFlight === 0) {
          const waiters = this.idleWaiters;
          this.idleWaiters = [];
          for (const w of waiters) w();
        }
      });
    }
  }

  private async deliver({ subscription: s, body }: Delivery): Promise<void> {
    s.lastNotification = Date.now();
    s.timesSent++;
    try {
      const res = await request(s.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...s.headers },
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) s.lastSuccess = Date.now();
      else {
        s.timesFailed++;
        s.lastFailure = Date.now();
      }
    } catch {
      s.timesFailed++;
      s.lastFailure = Date.now();
    }
  }
}

/** An ISO 8601 time as ms since the epoch, or undefined when it is not one. */
export function parseTime(raw: unknown): number | undefined {
  if (typeof raw !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/.test(raw))
    return undefined;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : ms;
}
