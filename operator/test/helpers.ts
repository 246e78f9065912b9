import { randomBytes } from 'node:crypto';
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from '@scriptorium/kube-testenv';
import type { Block, ChainStatus } from '@scriptorium/ledger-protocol';
import pino from 'pino';
import { buildCrds } from '../src/crd/index.ts';
import { KubeApiError } from '../src/errors.ts';
import { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, type ResourceType, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { Operator, type OperatorOptions } from '../src/operator.ts';

export const quietLog = pino({ level: process.env.OPERATOR_TEST_LOG ?? 'silent' });

/** Poll until `check` returns a value other than undefined/false, at most `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 45_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
}

/** Install both CRDs and wait until the API serves them. */
export async function installCrds(client: KubeClient): Promise<void> {
  for (const crd of Object.values(buildCrds())) {
    await client.request(
      'PATCH',
      resourcePath(RESOURCES.CustomResourceDefinition, undefined, (crd.metadata as { name: string }).name),
      {
        body: crd,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'test', force: true },
      },
    );
  }
  for (const crd of Object.values(buildCrds())) {
    const name = (crd.metadata as { name: string }).name;
    await eventually(`CRD ${name} established`, async () => {
      const got = await client.request<KubeObject>(
        'GET',
        resourcePath(RESOURCES.CustomResourceDefinition, undefined, name),
      );
      return got.status?.conditions?.some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      );
    });
  }
  await eventually('TranslationService served', async () => {
    await client.request('GET', resourcePath(RESOURCES.TranslationService, 'default'));
    await client.request('GET', resourcePath(RESOURCES.LedgerCluster, 'default'));
    return true;
  });
}

export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.request('POST', resourcePath(RESOURCES.Namespace), {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  return name;
}

export async function get(client: KubeClient, type: ResourceType, namespace: string, name: string) {
  try {
    return await client.request<KubeObject>('GET', resourcePath(type, namespace, name));
  } catch (err) {
    if (err instanceof KubeApiError && err.status === 404) return undefined;
    throw err;
  }
}

export async function list(client: KubeClient, type: ResourceType, namespace: string, labelSelector?: string) {
  const answer = await client.request<{ items: KubeObject[] }>('GET', resourcePath(type, namespace), {
    query: { labelSelector },
  });
  return answer.items;
}

export async function createSecret(client: KubeClient, namespace: string, name: string, data: Record<string, string>) {
  await client.request('POST', resourcePath(RESOURCES.Secret, namespace), {
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      stringData: data,
    },
  });
}

export function condition(obj: KubeObject | undefined, type: string) {
  return (obj?.status?.conditions ?? []).find((c: { type: string }) => c.type === type) as
    | { status: string; reason: string; message: string }
    | undefined;
}

/** Play the kubelet: mark every pod matching `selector` with `status` (there is no kubelet here). */
export async function setPodStatus(client: KubeClient, namespace: string, selector: string, status: object) {
  const pods = await list(client, RESOURCES.Pod, namespace, selector);
  for (const pod of pods) {
    await client.request('PATCH', resourcePath(RESOURCES.Pod, namespace, pod.metadata.name, 'status'), {
      body: { status },
      contentType: 'application/merge-patch+json',
    });
  }
  return pods.length;
}

/** Complete the migration Job of a TranslationService the way a kubelet would: its pod succeeds. */
export async function completeMigration(client: KubeClient, namespace: string, jobName: string) {
  await eventually(
    `pod of ${jobName}`,
    async () => (await list(client, RESOURCES.Pod, namespace, `job-name=${jobName}`)).length > 0,
  );
  await setPodStatus(client, namespace, `job-name=${jobName}`, { phase: 'Succeeded' });
}

/** Make the API pods Ready so the Deployment reports them available. */
export async function makePodsReady(client: KubeClient, namespace: string, instance: string) {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return setPodStatus(client, namespace, `app.kubernetes.io/instance=${instance},app.kubernetes.io/component=api`, {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: now },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
    ],
  });
}

export function translationService(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'scriptorium.dev/v1alpha1',
    kind: 'TranslationService',
    metadata: { name, namespace },
    spec: {
      image: 'scriptorium/translation:1.0.0',
      replicas: 1,
      database: { secretRef: { name: 'db-app', key: 'uri' } },
      // Once a year: the controller-manager must not start CronJob runs in the middle of a test.
      schedules: { worker: '0 0 1 1 *', retention: '0 0 1 1 *' },
      ...spec,
    },
  };
}

export async function create(client: KubeClient, obj: KubeObject): Promise<KubeObject> {
  const type = Object.values(RESOURCES).find((r) => r.apiVersion === obj.apiVersion && r.kind === obj.kind)!;
  return client.request<KubeObject>('POST', resourcePath(type, obj.metadata.namespace), { body: obj });
}

/** An operator of a testbed: its identity and what differs from the testbed's defaults (see `newOperator`). */
export type TestOperatorOptions = Partial<OperatorOptions> & { identity: string };

/** Leader election with short test timings: a standby leads within seconds of a released Lease. */
export const QUICK_ELECTION = {
  leaderElection: true,
  // client-go's lease and renew deadline: shorter ones lapsed once on CI's loaded machine (the test apiserver slow to
  // answer renewals), and an operator that lost its Lease reconciles nothing more. Hand-overs here are quick all the
  // same: a stopped operator releases its Lease, and candidates retry every 250 ms.
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 250,
} as const satisfies Partial<OperatorOptions>;

/** A test control plane with both CRDs served, the test's client, and the operators a test runs on it. */
export interface Testbed {
  plane: TestControlPlane;
  client: KubeClient;
  /**
   * An operator on the plane, not started: its own client, quiet log, Lease in `default`, without leader election
   * or resync unless `options` say otherwise. stop() stops it.
   */
  newOperator(options: TestOperatorOptions): Operator;
  /** newOperator, started and ready. */
  startOperator(options: TestOperatorOptions): Promise<Operator>;
  /** Stops every operator it made (in that order, errors ignored), closes the client, stops the plane. */
  stop(): Promise<void>;
}

/** Starts a test control plane (with kube-controller-manager unless `plane` says otherwise) and installs the CRDs. */
export async function startTestbed(plane: TestControlPlaneOptions = {}): Promise<Testbed> {
  const started = await startTestControlPlane(plane);
  const client = new KubeClient(started.kubeConfig);
  const operators: Operator[] = [];
  const bed: Testbed = {
    plane: started,
    client,
    newOperator(options) {
      const operator = new Operator({
        client: new KubeClient(started.kubeConfig),
        log: quietLog,
        leaseNamespace: 'default',
        leaderElection: false,
        resyncMs: 0,
        ...options,
      });
      operators.push(operator);
      return operator;
    },
    async startOperator(options) {
      const operator = bed.newOperator(options);
      await operator.start();
      await eventually('operator ready', () => operator.ready);
      return operator;
    },
    async stop() {
      for (const operator of operators) await operator.stop().catch(() => {});
      client.close();
      await started.stop();
    },
  };
  try {
    await installCrds(client);
  } catch (err) {
    await bed.stop();
    throw err;
  }
  return bed;
}

/** GET /chain of the ledger node at `base`; undefined while it does not answer 200 within `timeoutMs`. */
export async function chainStatus(base: string, timeoutMs = 2000): Promise<ChainStatus | undefined> {
  try {
    const res = await fetch(`${base}/chain`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.status === 200 ? ((await res.json()) as ChainStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** GET /blocks/:height of the ledger node at `base`. */
export async function fetchBlock(base: string, height: number): Promise<Block> {
  const res = await fetch(`${base}/blocks/${height}`);
  if (res.status !== 200) throw new Error(`GET /blocks/${height} from ${base}: ${res.status}`);
  return (await res.json()) as Block;
}
