// This node's subscriptions (subscribe mode): one per broker, each notifying the node's notification route on a
// channel of its own with a secret of its own (a fresh one each time a subscription is made). Every check interval
// each subscription is read back: one the broker forgot (a restart from a state without it, an expiry, someone
// deleting it) is made again, and the watcher is told (`onRecreated`: it sweeps, since changes made meanwhile were
// not notified); one past half its life is renewed (and, NGSI-LD, given the entity types the broker gained); one
// that has notified nothing since it was made while sweeps found changes on that broker no notification announced
// (`changesMissed`: Scorpio, loaded, has kept a new tenant's subscriptions active and silent for minutes) is
// deleted and made again, and the watcher is told as for a forgotten one. On
// start the node removes subscriptions a previous run of it left (found by their description, which names the
// node's key); on stop it removes its own. Subscriptions expire (SUBSCRIPTION_TTL_MS) so that a node gone for good
// stops costing the brokers notifications.
//
// The secret is checked in constant time against a digest of it; neither the secret nor the digest is logged or
// shown in /watch.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { BrokerEndpoint, SubscriptionProtocol, SubscriptionTarget } from './endpoint.ts';
import type { BrokerHttp } from './http-client.ts';
import type { WatcherMetrics } from './metrics.ts';
import { ngsiLdSubscriptions } from './ngsi-ld.ts';
import { ngsiV2Subscriptions } from './ngsi-v2.ts';
import { notifyPath } from './notification.ts';

/** How long a subscription lives; it is renewed once half of that is left. */
export const SUBSCRIPTION_TTL_MS = 3_600_000;
/** Subscriptions read per page when looking for a previous run's. */
const LIST_PAGE = 100;

export const subscriptionsFor = (endpoint: BrokerEndpoint): SubscriptionProtocol =>
  endpoint.api === 'ngsi-v2' ? ngsiV2Subscriptions : ngsiLdSubscriptions;

export interface SubscriptionStatus {
  /** `active`: made and last seen on the broker; `pending`: not made yet (NGSI-LD: no entity type known); `failed`. */
  state: 'active' | 'pending' | 'failed';
  id?: string;
  createdAt?: number;
  checkedAt?: number;
  expiresAt?: number;
  /** Times it was found forgotten, or silent while changes were missed, and made again. */
  recreated: number;
  /** Why the last attempt failed (status codes and URLs only). */
  error?: string;
}

interface Held {
  endpoint: BrokerEndpoint;
  channel: string | undefined;
  tokenDigest: Buffer | undefined;
  types: readonly string[];
  typesSent: string;
  status: SubscriptionStatus;
  /** A notification came on this subscription since it was made. */
  notified: boolean;
  /** Made and silent while changes were missed: made again at the next check. */
  silent: boolean;
  /**
   * When the first pass begun after the subscription was made ended: changes a sweep finds from then on were made
   * while it existed (that pass finds those made before, after a restart or while it was silent).
   */
  judgedFrom: number | undefined;
}

export interface SubscriberOptions {
  /** The base URL brokers notify (no trailing slash). */
  notifyUrl: string;
  /** Names this node in its subscriptions' description. */
  nodeKey: string;
  checkMs: number;
  logger?: Logger | undefined;
  metrics?: WatcherMetrics | undefined;
  now?: () => number;
  /** Called when a subscription the broker forgot, or a silent one, was made again. */
  onRecreated?: (endpoint: BrokerEndpoint) => void;
}

const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export class Subscriber {
  private readonly held = new Map<string, Held>();
  private readonly channels = new Map<string, Held>();
  private readonly http: BrokerHttp;
  private readonly options: SubscriberOptions;
  private readonly now: () => number;
  private readonly description: string;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private stopped = true;

  constructor(endpoints: readonly BrokerEndpoint[], http: BrokerHttp, options: SubscriberOptions) {
    this.http = http;
    this.options = options;
    this.now = options.now ?? Date.now;
    this.description = `scriptorium ledger watch, node ${options.nodeKey.slice(0, 16)}`;
    for (const endpoint of endpoints)
      this.held.set(endpoint.url, {
        endpoint,
        channel: undefined,
        tokenDigest: undefined,
        types: [],
        typesSent: '',
        status: { state: 'pending', recreated: 0 },
        notified: false,
        silent: false,
        judgedFrom: undefined,
      });
  }

  /**
   * The broker a notification on `channel` comes from, when `token` is that subscription's secret; the subscription
   * then counts as one that notifies (changesMissed).
   */
  authenticate(channel: string, token: string | undefined): BrokerEndpoint | undefined {
    const held = this.channels.get(channel);
    // Compared in constant time, digests of equal length, whether the channel exists or not.
    const expected = held?.tokenDigest ?? digest(`no channel ${channel}`);
    const ok = timingSafeEqual(digest(token ?? ''), expected);
    if (!ok || !held) return undefined;
    held.notified = true;
    return held.endpoint;
  }

  /**
   * A change a sweep found on the broker at `url` at `foundAt` was counted missed (no notification came in its
   * grace): a subscription that has notified nothing at all since it was made is presumed silent, and is made again
   * at the next check, once a pass begun after it was made has ended (before that, a sweep finds what changed before
   * the subscription existed). One that has notified before is kept: a broker that loses some notifications is what
   * sweeps are for.
   */
  changesMissed(url: string, foundAt: number): void {
    const held = this.held.get(url);
    if (!held || held.status.id === undefined || held.notified) return;
    if (held.judgedFrom !== undefined && foundAt >= held.judgedFrom) held.silent = true;
  }

  /** A pass that began at `startedAt` read the brokers, and ended at `endedAt`. */
  passRead(startedAt: number, endedAt: number): void {
    for (const held of this.held.values())
      if (held.judgedFrom === undefined && held.status.createdAt !== undefined && held.status.createdAt <= startedAt)
        held.judgedFrom = endedAt;
  }

  /** NGSI-LD: the entity types a read of the broker found (the subscription names them; renewed when they grow). */
  setTypes(url: string, types: readonly string[]): void {
    const held = this.held.get(url);
    if (held) held.types = types;
  }

  status(url: string): SubscriptionStatus | undefined {
    const s = this.held.get(url)?.status;
    return s ? { ...s } : undefined;
  }

  /** Removes what a previous run left, subscribes, and checks every check interval. */
  async start(): Promise<void> {
    this.stopped = false;
    await Promise.all([...this.held.values()].map((h) => this.removeStale(h)));
    this.loop();
  }

  private loop(): void {
    if (this.stopped) return;
    this.checking = this.check().finally(() => {
      this.checking = undefined;
      if (!this.stopped) this.timer = setTimeout(() => this.loop(), this.options.checkMs);
    });
  }

  /** Checks (makes, renews, makes again) every subscription now. */
  async check(): Promise<void> {
    await Promise.all([...this.held.values()].map((h) => this.checkOne(h)));
  }

  /** Stops checking and removes this node's subscriptions. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.checking;
    await Promise.all(
      [...this.held.values()].map(async (h) => {
        if (h.status.id) await this.remove(h, h.status.id).catch(() => undefined);
      }),
    );
  }

  private target(held: Held, channel: string, token: string): SubscriptionTarget {
    return {
      url: `${this.options.notifyUrl}${notifyPath(channel)}`,
      token,
      description: this.description,
      expiresAt: this.now() + SUBSCRIPTION_TTL_MS,
      types: held.types,
    };
  }

  private async checkOne(held: Held): Promise<void> {
    const { endpoint } = held;
    const api = subscriptionsFor(endpoint);
    try {
      if (endpoint.api === 'ngsi-ld' && held.types.length === 0) return; // nothing to name yet
      const id = held.status.id;
      if (id === undefined) {
        await this.create(held, 'new');
        return;
      }
      if (held.silent) {
        this.options.logger?.warn(
          { broker: endpoint.url },
          'broker watcher: the broker notified nothing while a sweep found changes; subscribing again, and sweeping',
        );
        await this.remove(held, id).catch(() => undefined);
        await this.create(held, 'silent');
        return;
      }
      const one = api.one(endpoint, id);
      const res = await this.http.send(endpoint.url, 'GET', one.url, one.headers);
      if (res.status === 404) {
        this.options.logger?.warn(
          { broker: endpoint.url },
          'broker watcher: the broker forgot this node’s subscription; subscribing again, and sweeping',
        );
        await this.create(held, 'forgotten');
        return;
      }
      if (res.status !== 200) throw new Error(`GET subscription answered ${res.status}`);
      held.status.checkedAt = this.now();
      const types = held.types.join(',');
      const expiresAt = held.status.expiresAt ?? 0;
      if (expiresAt - this.now() < SUBSCRIPTION_TTL_MS / 2 || types !== held.typesSent) {
        const target = this.target(held, held.channel as string, '');
        const renew = api.renew(endpoint, id, target);
        const patched = await this.http.send(endpoint.url, 'PATCH', renew.url, renew.headers, renew.body);
        if (patched.status >= 300) throw new Error(`PATCH subscription answered ${patched.status}`);
        held.status.expiresAt = target.expiresAt;
        held.typesSent = types;
      }
      this.setState(held, 'active');
    } catch (err) {
      held.status.error = (err as Error).message;
      this.setState(held, 'failed');
      this.options.logger?.warn(
        { broker: endpoint.url, detail: held.status.error },
        'broker watcher: subscription check failed; trying again next check',
      );
    }
  }

  /** Makes the subscription: `new`, or again because the broker `forgotten` it or it stayed `silent`. */
  private async create(held: Held, reason: 'new' | 'forgotten' | 'silent'): Promise<void> {
    const { endpoint } = held;
    const api = subscriptionsFor(endpoint);
    const channel = randomBytes(16).toString('base64url');
    const token = randomBytes(32).toString('base64url');
    const target = this.target(held, channel, token);
    const req = api.create(endpoint, target);
    const res = await this.http.send(endpoint.url, 'POST', req.url, req.headers, req.body);
    const id = res.status === 201 ? api.createdId(res) : undefined;
    if (!id) throw new Error(`POST subscription answered ${res.status}`);
    if (held.channel) this.channels.delete(held.channel);
    held.channel = channel;
    held.tokenDigest = digest(token);
    held.typesSent = held.types.join(',');
    this.channels.set(channel, held);
    held.notified = false;
    held.silent = false;
    held.judgedFrom = undefined;
    held.status = {
      ...held.status,
      id,
      createdAt: this.now(),
      checkedAt: this.now(),
      expiresAt: target.expiresAt,
      recreated: held.status.recreated + (reason === 'new' ? 0 : 1),
    };
    this.setState(held, 'active');
    this.options.metrics?.subscriptionsMade.inc({ broker: endpoint.url, reason });
    if (reason !== 'new') this.options.onRecreated?.(endpoint);
  }

  private setState(held: Held, state: SubscriptionStatus['state']): void {
    held.status.state = state;
    if (state === 'active') delete held.status.error;
    this.options.metrics?.subscribed.set({ broker: held.endpoint.url }, state === 'active' ? 1 : 0);
  }

  private async remove(held: Held, id: string): Promise<void> {
    const one = subscriptionsFor(held.endpoint).one(held.endpoint, id);
    await this.http.send(held.endpoint.url, 'DELETE', one.url, one.headers);
  }

  /** Deletes the subscriptions a previous run of this node left on the broker (same description). */
  private async removeStale(held: Held): Promise<void> {
    const api = subscriptionsFor(held.endpoint);
    try {
      const stale: string[] = [];
      for (let offset = 0; offset < 100 * LIST_PAGE; offset += LIST_PAGE) {
        const req = api.list(held.endpoint, offset, LIST_PAGE);
        const res = await this.http.send(held.endpoint.url, 'GET', req.url, req.headers);
        if (res.status !== 200) break;
        const page = api.listed(res.body);
        for (const s of page) if (s.description === this.description) stale.push(s.id);
        if (page.length < LIST_PAGE) break;
      }
      for (const id of stale) await this.remove(held, id);
      if (stale.length > 0)
        this.options.logger?.info(
          { broker: held.endpoint.url, removed: stale.length },
          'broker watcher: removed subscriptions a previous run of this node left',
        );
    } catch (err) {
      this.options.logger?.warn(
        { broker: held.endpoint.url, detail: (err as Error).message },
        'broker watcher: could not look for subscriptions a previous run left',
      );
    }
  }
}
