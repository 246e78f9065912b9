import type { Logger } from 'pino';
import { isConflict, isNotFound } from '../errors.ts';
import type { KubeClient } from './client.ts';
import { microTime } from './events.ts';
import { RESOURCES, resourcePath } from './resources.ts';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  log?: Logger;
  now?: () => number;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** Whether `lease` is free for `identity` at `nowMs`: unheld, held by it, released, or expired. */
export function leaseIsFree(lease: Lease['spec'], identity: string, nowMs: number): boolean {
  if (!lease.holderIdentity || lease.holderIdentity === identity) return true;
  const renewed = lease.renewTime ? Date.parse(lease.renewTime) : 0;
  return renewed + (lease.leaseDurationSeconds ?? 15) * 1000 < nowMs;
}

/**
 * Leader election on a coordination.k8s.io Lease, as client-go does it: try to acquire every retry period,
 * renew while leading, step down when a renewal has not succeeded within the renew deadline, and release
 * (empty holder, 1 s duration) on shutdown so a standby takes over at once.
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #o: Required<Omit<LeaderElectionOptions, 'log'>> & { log?: Logger };
  #leading = false;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #lastRenew = 0;
  #wake: (() => void) | undefined;
  /** The election loop, while it runs: stop() waits for it before releasing. */
  #loop: Promise<void> | undefined;

  constructor(client: KubeClient, options: LeaderElectionOptions) {
    this.#client = client;
    this.#o = {
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      now: Date.now,
      ...options,
    };
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  get #path(): string {
    return resourcePath(RESOURCES.Lease, this.#o.namespace, this.#o.name);
  }

  /** One acquire-or-renew attempt; true when this process holds the Lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.#o.now();
    const spec = (transitions: number, acquired: string | null | undefined): Lease['spec'] => ({
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      acquireTime: acquired ?? microTime(new Date(now)),
      renewTime: microTime(new Date(now)),
      leaseTransitions: transitions,
    });
    let lease: Lease;
    try {
      lease = await this.#client.request<Lease>('GET', this.#path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.#client.request('POST', resourcePath(RESOURCES.Lease, this.#o.namespace), {
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.#o.name, namespace: this.#o.namespace },
            spec: spec(0, null),
          },
        });
        return true;
      } catch (createErr) {
        if (isConflict(createErr)) return false;
        throw createErr;
      }
    }
    if (!leaseIsFree(lease.spec, this.#o.identity, now)) return false;
    const ours = lease.spec.holderIdentity === this.#o.identity;
    const transitions = (lease.spec.leaseTransitions ?? 0) + (ours ? 0 : 1);
    try {
      await this.#client.request('PUT', this.#path, {
        body: { ...lease, spec: spec(transitions, ours ? lease.spec.acquireTime : null) },
      });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /**
   * Run the election until stop(). `onStartedLeading` is called once when the Lease is won;
   * `onStoppedLeading` when it is lost (the caller should exit, as client-go's users do).
   */
  run(callbacks: { onStartedLeading: () => void; onStoppedLeading: () => void }): Promise<void> {
    this.#loop ??= this.#run(callbacks);
    return this.#loop;
  }

  async #run(callbacks: { onStartedLeading: () => void; onStoppedLeading: () => void }): Promise<void> {
    while (!this.#stopped) {
      let held = false;
      try {
        held = await this.tryAcquireOrRenew();
      } catch (err) {
        this.#o.log?.warn({ err: String(err) }, 'leader election: lease request failed');
      }
      const now = this.#o.now();
      if (held) {
        this.#lastRenew = now;
        if (!this.#leading) {
          this.#leading = true;
          this.#o.log?.info({ lease: this.#o.name, identity: this.#o.identity }, 'leader election: became leader');
          callbacks.onStartedLeading();
        }
      } else if (this.#leading && now - this.#lastRenew > this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#o.log?.warn({ lease: this.#o.name }, 'leader election: lost the lease');
        callbacks.onStoppedLeading();
        return;
      }
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        this.#timer = setTimeout(resolve, this.#o.retryPeriodMs);
      });
    }
  }

  /**
   * Stop the election; a leader releases the Lease so another replica can take it without waiting. An attempt in
   * flight finishes first: a renewal landing between the release's read and write made the release a conflict, and
   * the Lease stayed held until it expired (a standby waited the whole lease duration).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#wake?.();
    await this.#loop?.catch(() => undefined);
    if (!this.#leading) return;
    this.#leading = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const lease = await this.#client.request<Lease>('GET', this.#path);
        if (lease.spec.holderIdentity !== this.#o.identity) return;
        await this.#client.request('PUT', this.#path, {
          body: {
            ...lease,
            spec: {
              ...lease.spec,
              holderIdentity: null,
              leaseDurationSeconds: 1,
              acquireTime: null,
              renewTime: microTime(),
            },
          },
        });
        this.#o.log?.info({ lease: this.#o.name }, 'leader election: released the lease');
        return;
      } catch (err) {
        // A conflict: the Lease changed between the read and the write (another writer); read it again.
        if (isConflict(err) && attempt < 3) continue;
        this.#o.log?.warn({ err: String(err) }, 'leader election: release failed');
        return;
      }
    }
  }
}
