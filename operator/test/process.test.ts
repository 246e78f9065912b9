import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES } from '../src/kube/resources.ts';
import { eventually, get, startTestbed, type Testbed } from './helpers.ts';

// The operator as its own process (as in the image): probes, metrics, the Lease, and a clean SIGTERM.
let bed: Testbed;
let client: KubeClient;
let child: ChildProcess | undefined;

beforeAll(async () => {
  bed = await startTestbed({ withControllerManager: false });
  client = bed.client;
});

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await bed?.stop();
});

describe('operator process', () => {
  it('serves probes and metrics, holds the Lease, and releases it on SIGTERM', async () => {
    const port = await freePort();
    let stderr = '';
    child = spawn(process.execPath, [join(import.meta.dirname, '..', 'src', 'main.ts')], {
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: bed.plane.kubeconfigPath,
        POD_NAMESPACE: 'default',
        POD_NAME: 'process-test',
        HTTP__PORT: String(port),
        HTTP__HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    const base = `http://127.0.0.1:${port}`;
    await eventually('healthz', async () => (await fetch(`${base}/healthz`)).status === 200, 30_000);
    await eventually('readyz', async () => (await fetch(`${base}/readyz`)).status === 200, 30_000);
    const lease = await eventually('Lease held', async () => {
      const l = await get(client, RESOURCES.Lease, 'default', 'scriptorium-operator');
      return l?.spec.holderIdentity === 'process-test' ? l : undefined;
    });
    expect(lease.spec.leaseDurationSeconds).toBe(15);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      'scriptorium_operator_leader 1',
      'scriptorium_operator_workqueue_depth',
      'scriptorium_operator_reconcile_duration_seconds',
      'scriptorium_operator_process_resident_memory_bytes',
    ]) {
      expect(metrics).toContain(name);
    }
    expect((await fetch(`${base}/nope`)).status).toBe(404);

    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const released = await get(client, RESOURCES.Lease, 'default', 'scriptorium-operator');
    expect(released?.spec.holderIdentity ?? null).toBeNull();
    expect(stderr).toBe('');
  });
});
