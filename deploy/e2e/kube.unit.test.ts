// The suite's helpers that decide what a failure says: a command's own bound, and the one-line account of pods.
import { describe, expect, it } from 'vitest';
import { ownTimeoutMs, podStates } from './kube.ts';

describe('ownTimeoutMs', () => {
  it("reads kubectl's --timeout=Ns and helm's --timeout Ns (seconds or minutes)", () => {
    expect(ownTimeoutMs(['-n', 'x', 'rollout', 'status', 'deployment/a', '--timeout=300s'])).toBe(300_000);
    expect(ownTimeoutMs(['uninstall', 'r', '--wait', '--timeout', '180s'])).toBe(180_000);
    expect(ownTimeoutMs(['wait', '--timeout=5m'])).toBe(300_000);
  });
  it('none set, or a form it does not know: undefined (the default bound applies)', () => {
    expect(ownTimeoutMs(['get', 'pods'])).toBeUndefined();
    expect(ownTimeoutMs(['wait', '--timeout=1h30m'])).toBeUndefined();
    expect(ownTimeoutMs(['--timeout'])).toBeUndefined();
  });
});

describe('podStates', () => {
  it("names each pod's phase, containers, restarts and unmet conditions", () => {
    const line = podStates([
      {
        metadata: { name: 'api-1' },
        status: {
          phase: 'Pending',
          conditions: [
            { type: 'PodScheduled', status: 'False', message: '0/1 nodes are available: 1 Insufficient cpu.' },
            { type: 'Initialized', status: 'True' },
          ],
        },
      },
      {
        metadata: { name: 'api-2', deletionTimestamp: '2026-01-01T00:00:00Z' },
        status: {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'api',
              ready: false,
              restartCount: 3,
              state: { waiting: { reason: 'CrashLoopBackOff' } },
              lastState: { terminated: { reason: 'Error', exitCode: 1 } },
            },
          ],
        },
      },
    ]);
    expect(line).toBe(
      'api-1: Pending; PodScheduled: 0/1 nodes are available: 1 Insufficient cpu. | ' +
        'api-2: Running; terminating; api waiting CrashLoopBackOff, 3 restarts (last Error)',
    );
  });
});
