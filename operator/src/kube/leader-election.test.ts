import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../errors.ts';
import type { KubeClient } from './client.ts';
import { LeaderElector, leaseIsFree } from './leader-election.ts';

describe('leaseIsFree', () => {
  const now = Date.parse('2026-01-01T00:00:30Z');
  it('is free when unheld, released or ours', () => {
    expect(leaseIsFree({}, 'a', now)).toBe(true);
    expect(leaseIsFree({ holderIdentity: null }, 'a', now)).toBe(true);
    expect(leaseIsFree({ holderIdentity: 'a', renewTime: '2026-01-01T00:00:29.000000Z' }, 'a', now)).toBe(true);
  });
  it('is held by another until renewTime + duration has passed', () => {
    const held = { holderIdentity: 'b', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:20.000000Z' };
    expect(leaseIsFree(held, 'a', now)).toBe(false);
    expect(leaseIsFree({ ...held, renewTime: '2026-01-01T00:00:10.000000Z' }, 'a', now)).toBe(true);
  });
});

/** A Lease on an API that checks resourceVersions (409 on a stale write); writes wait for `hold` while it is set. */
function leaseApi() {
  let lease: { metadata: { resourceVersion: string }; spec: Record<string, unknown> } | undefined;
  let version = 0;
  const api = {
    hold: undefined as Promise<void> | undefined,
    get holder() {
      return lease?.spec.holderIdentity;
    },
    async request(method: string, _path: string, options: { body?: unknown } = {}): Promise<unknown> {
      if (method === 'GET') {
        if (!lease) throw new KubeApiError(404, 'NotFound', 'no lease');
        return structuredClone(lease);
      }
      const body = structuredClone(options.body) as NonNullable<typeof lease>;
      if (method === 'POST') {
        if (lease) throw new KubeApiError(409, 'AlreadyExists', 'exists');
      } else {
        await api.hold;
        if (body.metadata.resourceVersion !== lease?.metadata.resourceVersion)
          throw new KubeApiError(409, 'Conflict', 'stale resourceVersion');
      }
      lease = { ...body, metadata: { ...body.metadata, resourceVersion: String(++version) } };
      return structuredClone(lease);
    },
  };
  return api;
}

describe('LeaderElector.stop', () => {
  it('releases the Lease even when a renewal was in flight (it waits for it, then writes the release)', async () => {
    const api = leaseApi();
    const elector = new LeaderElector(api as unknown as KubeClient, {
      namespace: 'default',
      name: 'lease',
      identity: 'a',
      retryPeriodMs: 5,
    });
    let leading = false;
    const running = elector.run({ onStartedLeading: () => (leading = true), onStoppedLeading: () => {} });
    while (!leading) await new Promise((r) => setTimeout(r, 1));
    // The next renewal's write waits; stop() is called while it does.
    let open = () => {};
    api.hold = new Promise((r) => (open = r));
    await new Promise((r) => setTimeout(r, 20));
    const stopped = elector.stop();
    await new Promise((r) => setTimeout(r, 5));
    open();
    api.hold = undefined;
    await stopped;
    await running;
    expect(api.holder).toBeNull();
    expect(elector.isLeader).toBe(false);
  });
});
