import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINALIZER } from '../src/controllers/translation-service/index.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import type { Operator } from '../src/operator.ts';
import {
  completeMigration,
  condition,
  create,
  createNamespace,
  createSecret,
  eventually,
  get,
  list,
  makePodsReady,
  QUICK_ELECTION,
  startTestbed,
  type Testbed,
  translationService,
} from './helpers.ts';

// The operator against a real kube-apiserver + kube-controller-manager (garbage collector, Deployment,
// ReplicaSet and Job controllers). There is no kubelet: the tests mark pods Succeeded/Ready themselves.
let bed: Testbed;
let client: KubeClient;
let operator: Operator;
const LEASE = 'scriptorium-operator-test';

function startOperator(identity: string): Operator {
  return bed.newOperator({ identity, ...QUICK_ELECTION, leaseName: LEASE, concurrency: 4 });
}

async function status(ns: string, name: string) {
  return get(client, RESOURCES.TranslationService, ns, name);
}

beforeAll(async () => {
  bed = await startTestbed();
  client = bed.client;
  operator = startOperator('operator-a');
  await operator.start();
  await eventually('operator-a leads', () => operator.isLeader && operator.controller.synced);
});

afterAll(async () => {
  await bed?.stop();
});

describe('TranslationService reconciler', () => {
  it('reconciles a valid spec to all its objects, gating the Deployment on the migration Job', async () => {
    const ns = await createNamespace(client, 'ts');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://app@db/app' });
    await create(client, translationService(ns, 'web', { ingress: { host: 'web.example.com', className: 'nginx' } }));

    const progressing = await eventually('MigrationRunning', async () => {
      const ts = await status(ns, 'web');
      return condition(ts, 'Progressing')?.reason === 'MigrationRunning' ? ts : undefined;
    });
    expect(progressing.metadata.finalizers).toContain(FINALIZER);
    expect(condition(progressing, 'Ready')).toMatchObject({ status: 'False', reason: 'MigrationRunning' });
    expect(progressing.status.observedGeneration).toBe(progressing.metadata.generation);
    expect(progressing.status.url).toBe('http://web.example.com');
    for (const [type, name] of [
      [RESOURCES.Service, 'web'],
      [RESOURCES.PodDisruptionBudget, 'web'],
      [RESOURCES.Ingress, 'web'],
      [RESOURCES.Secret, 'web-worker-secret'],
      [RESOURCES.Secret, 'web-session-secret'],
      [RESOURCES.Job, progressing.status.migration.job],
    ] as const) {
      const obj = await get(client, type, ns, name);
      expect(obj, `${type.kind} ${name}`).toBeDefined();
      expect(obj?.metadata.ownerReferences?.[0]?.uid).toBe(progressing.metadata.uid);
    }
    expect(await get(client, RESOURCES.Deployment, ns, 'web')).toBeUndefined();
    const workerSecret = await get(client, RESOURCES.Secret, ns, 'web-worker-secret');

    await completeMigration(client, ns, progressing.status.migration.job);
    const deployment = await eventually('Deployment after migration', () =>
      get(client, RESOURCES.Deployment, ns, 'web'),
    );
    expect(deployment.spec.template.spec.containers[0].args).toEqual(['serve']);
    expect((deployment.metadata.managedFields as Array<{ manager: string }>).map((f) => f.manager)).toContain(
      'scriptorium-operator',
    );
    await eventually('CronJobs', async () => (await list(client, RESOURCES.CronJob, ns)).length === 2);
    await eventually(
      'RollingOut',
      async () => condition(await status(ns, 'web'), 'Progressing')?.reason === 'RollingOut',
    );

    await eventually('pods ready', async () => (await makePodsReady(client, ns, 'web')) >= 1);
    const ready = await eventually('Ready', async () => {
      const ts = await status(ns, 'web');
      return condition(ts, 'Ready')?.status === 'True' ? ts : undefined;
    });
    expect(condition(ready, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    expect(condition(ready, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(ready.status.readyReplicas).toBe(1);

    const events = await eventually('Created Events', async () => {
      const all = (await list(client, RESOURCES.Event, ns)).filter((e) => e.regarding?.kind === 'TranslationService');
      const notes = all.filter((e) => e.reason === 'Created').flatMap((e) => e.note.split('; '));
      const wanted = ['Created Service web', 'Created Deployment web', 'Created CronJob web-worker'];
      return wanted.every((n) => notes.includes(n)) ? all : undefined;
    });
    expect(events.every((e) => e.reportingController === 'scriptorium.dev/operator')).toBe(true);
    // Generated Secrets are never rewritten.
    expect((await get(client, RESOURCES.Secret, ns, 'web-worker-secret'))?.data).toEqual(workerSecret?.data);
  });

  it('corrects drift: a deleted child comes back, an edited field is put back', async () => {
    const ns = await createNamespace(client, 'drift');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(client, translationService(ns, 'web'));
    const ts = await eventually('migration job', async () => (await status(ns, 'web'))?.status?.migration?.job);
    await completeMigration(client, ns, ts);
    const dep = await eventually('Deployment', () => get(client, RESOURCES.Deployment, ns, 'web'));

    const svc = await get(client, RESOURCES.Service, ns, 'web');
    await client.request('DELETE', resourcePath(RESOURCES.Service, ns, 'web'));
    const back = await eventually('Service recreated', async () => {
      const s = await get(client, RESOURCES.Service, ns, 'web');
      return s && s.metadata.uid !== svc?.metadata.uid ? s : undefined;
    });
    expect(back.spec.ports[0].port).toBe(80);

    await client.request('PATCH', resourcePath(RESOURCES.Deployment, ns, 'web'), {
      body: { spec: { replicas: 5, template: { spec: { containers: [{ name: 'translation', image: 'evil:1' }] } } } },
      contentType: 'application/strategic-merge-patch+json',
      query: { fieldManager: 'kubectl-edit' },
    });
    const fixed = await eventually('Deployment restored', async () => {
      const d = await get(client, RESOURCES.Deployment, ns, 'web');
      return d?.spec.replicas === 1 &&
        d.spec.template.spec.containers[0].image === dep.spec.template.spec.containers[0].image
        ? d
        : undefined;
    });
    expect(fixed.metadata.generation).toBeGreaterThan(dep.metadata.generation ?? 0);
    // Events are written at the end of a reconcile, after the objects: wait for them.
    await eventually('drift Event', async () =>
      (await list(client, RESOURCES.Event, ns)).some((e) => e.reason === 'Updated' && /drift/.test(e.note)),
    );
  });

  it('runs a new migration Job before rolling out a new image, then deletes the old Job', async () => {
    const ns = await createNamespace(client, 'rollout');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(client, translationService(ns, 'web'));
    const job1 = await eventually('first migration job', async () => (await status(ns, 'web'))?.status?.migration?.job);
    await completeMigration(client, ns, job1);
    await eventually('Deployment at 1.0.0', async () => {
      const d = await get(client, RESOURCES.Deployment, ns, 'web');
      return d?.spec.template.spec.containers[0].image === 'scriptorium/translation:1.0.0';
    });

    await client.request('PATCH', resourcePath(RESOURCES.TranslationService, ns, 'web'), {
      body: { spec: { image: 'scriptorium/translation:1.1.0' } },
      contentType: 'application/merge-patch+json',
    });
    const job2 = await eventually('second migration job', async () => {
      const ts = await status(ns, 'web');
      const job = ts?.status?.migration?.job;
      return job && job !== job1 && condition(ts, 'Progressing')?.reason === 'MigrationRunning' ? job : undefined;
    });
    expect(job2).toMatch(/^web-migrate-[0-9a-f]{10}$/);
    // The Deployment waits for the new migration.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const waiting = await get(client, RESOURCES.Deployment, ns, 'web');
    expect(waiting?.spec.template.spec.containers[0].image).toBe('scriptorium/translation:1.0.0');

    await completeMigration(client, ns, job2);
    await eventually('Deployment at 1.1.0', async () => {
      const d = await get(client, RESOURCES.Deployment, ns, 'web');
      return d?.spec.template.spec.containers[0].image === 'scriptorium/translation:1.1.0';
    });
    await eventually(
      'old migration Job deleted',
      async () => (await get(client, RESOURCES.Job, ns, job1)) === undefined,
    );
    const cron = await get(client, RESOURCES.CronJob, ns, 'web-worker');
    expect(cron?.spec.jobTemplate.spec.template.spec.containers[0].image).toBe('scriptorium/translation:1.1.0');
  });

  it('creates an HPA for autoscaling and deletes it when a fixed replica count replaces it', async () => {
    const ns = await createNamespace(client, 'hpa');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(
      client,
      translationService(ns, 'web', { replicas: undefined, autoscaling: { minReplicas: 2, maxReplicas: 5 } }),
    );
    const hpa = await eventually('HPA', () => get(client, RESOURCES.HorizontalPodAutoscaler, ns, 'web'));
    expect(hpa.spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 5,
      scaleTargetRef: { kind: 'Deployment', name: 'web' },
    });
    await client.request('PATCH', resourcePath(RESOURCES.TranslationService, ns, 'web'), {
      body: { spec: { autoscaling: null, replicas: 3 } },
      contentType: 'application/merge-patch+json',
    });
    await eventually(
      'HPA deleted',
      async () => (await get(client, RESOURCES.HorizontalPodAutoscaler, ns, 'web')) === undefined,
    );
    await eventually('Deleted Event', async () =>
      (await list(client, RESOURCES.Event, ns)).some(
        (e) => e.reason === 'Deleted' && e.note.includes('HorizontalPodAutoscaler web'),
      ),
    );
  });

  it('reports a missing Secret as Degraded/SecretNotFound with an Event, and recovers when it appears', async () => {
    const ns = await createNamespace(client, 'nosecret');
    await create(client, translationService(ns, 'web'));
    const degraded = await eventually('SecretNotFound', async () => {
      const ts = await status(ns, 'web');
      return condition(ts, 'Degraded')?.reason === 'SecretNotFound' ? ts : undefined;
    });
    expect(condition(degraded, 'Degraded')?.status).toBe('True');
    expect(condition(degraded, 'Ready')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    expect(condition(degraded, 'Degraded')?.message).toContain('spec.database.secretRef: Secret db-app not found');
    await eventually('SecretNotFound event', async () =>
      (await list(client, RESOURCES.Event, ns)).some((e) => e.reason === 'SecretNotFound' && e.type === 'Warning'),
    );

    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    const recovered = await eventually('recovered', async () => {
      const ts = await status(ns, 'web');
      return condition(ts, 'Degraded')?.status === 'False' ? ts : undefined;
    });
    expect(condition(recovered, 'Progressing')?.reason).toBe('MigrationRunning');
  });

  it('refuses to take over objects it does not control', async () => {
    const ns = await createNamespace(client, 'clash');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await createSecret(client, ns, 'web-worker-secret', { secret: 'someone else' });
    await create(client, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: ns },
      spec: { ports: [{ port: 8080 }], selector: { app: 'theirs' } },
    });
    await create(client, translationService(ns, 'web'));
    const refused = await eventually('ResourceConflict', async () => {
      const ts = await status(ns, 'web');
      return condition(ts, 'Degraded')?.reason === 'ResourceConflict' ? ts : undefined;
    });
    expect(condition(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'ResourceConflict' });
    expect(condition(refused, 'Degraded')?.message).toContain('Secret web-worker-secret exists and is not controlled');
    await eventually('Refused event', async () =>
      (await list(client, RESOURCES.Event, ns)).some((e) => e.reason === 'Refused' && e.type === 'Warning'),
    );
    const secret = await get(client, RESOURCES.Secret, ns, 'web-worker-secret');
    expect(Buffer.from(secret?.data.secret, 'base64').toString()).toBe('someone else');
    expect(secret?.metadata.ownerReferences).toBeUndefined();

    await client.request('DELETE', resourcePath(RESOURCES.Secret, ns, 'web-worker-secret'));
    const stillRefused = await eventually('Service conflict reported', async () => {
      const ts = await status(ns, 'web');
      const message = condition(ts, 'Degraded')?.message ?? '';
      return message.includes('Service web exists') ? ts : undefined;
    });
    expect(condition(stillRefused, 'Degraded')?.status).toBe('True');
    const svc = await get(client, RESOURCES.Service, ns, 'web');
    expect(svc?.spec.selector).toEqual({ app: 'theirs' });
    expect(svc?.metadata.ownerReferences).toBeUndefined();
  });

  it('deletes through the finalizer, then the garbage collector removes the children', async () => {
    const ns = await createNamespace(client, 'del');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(client, translationService(ns, 'web'));
    const job = await eventually('migration job', async () => (await status(ns, 'web'))?.status?.migration?.job);
    await completeMigration(client, ns, job);
    await eventually('CronJobs', async () => (await list(client, RESOURCES.CronJob, ns)).length === 2);

    await client.request('DELETE', resourcePath(RESOURCES.TranslationService, ns, 'web'));
    await eventually('TranslationService gone', async () => (await status(ns, 'web')) === undefined);
    await eventually(
      'children collected',
      async () => {
        const left = [
          ...(await list(client, RESOURCES.Service, ns)),
          ...(await list(client, RESOURCES.Deployment, ns)),
          ...(await list(client, RESOURCES.CronJob, ns)),
          ...(await list(client, RESOURCES.Job, ns)),
          ...(await list(client, RESOURCES.PodDisruptionBudget, ns)),
          ...(await list(client, RESOURCES.Secret, ns)).filter((s) => s.metadata.name !== 'db-app'),
        ];
        return left.length === 0;
      },
      60_000,
    );
    await eventually('Finalized and Deleted Events', async () => {
      const events = await list(client, RESOURCES.Event, ns);
      return (
        events.some((e) => e.reason === 'Finalized') &&
        events.some((e) => e.reason === 'Deleted' && /CronJob/.test(e.note))
      );
    });
  });

  it('makes no writes when a restarted operator finds everything up to date', async () => {
    const ns = await createNamespace(client, 'quiet');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(client, translationService(ns, 'web'));
    const job = await eventually('migration job', async () => (await status(ns, 'web'))?.status?.migration?.job);
    await completeMigration(client, ns, job);
    await eventually('pods ready', async () => (await makePodsReady(client, ns, 'web')) >= 1);
    await eventually('Ready', async () => condition(await status(ns, 'web'), 'Ready')?.status === 'True');

    const snapshot = async () => {
      const objects: KubeObject[] = [
        ...(await list(client, RESOURCES.TranslationService, ns)),
        ...(await list(client, RESOURCES.Service, ns)),
        ...(await list(client, RESOURCES.Deployment, ns)),
        ...(await list(client, RESOURCES.CronJob, ns)),
        ...(await list(client, RESOURCES.Job, ns)),
        ...(await list(client, RESOURCES.PodDisruptionBudget, ns)),
        ...(await list(client, RESOURCES.Secret, ns)),
      ];
      return Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
    };
    await new Promise((resolve) => setTimeout(resolve, 3000)); // let the controller-manager settle
    const before = await snapshot();

    await operator.stop();
    const restarted = startOperator('operator-restarted');
    await restarted.start();
    operator = restarted;
    await eventually('restarted operator leads and synced', () => restarted.isLeader && restarted.controller.synced);
    const count = (await list(client, RESOURCES.TranslationService, '')).length;
    await eventually('every resource reconciled once', () => restarted.controller.stats.reconciles >= count, 60_000);
    await eventually('queue drained', () => restarted.controller.queue.length === 0);
    expect(restarted.controller.stats.writes).toBe(0);
    expect(restarted.controller.stats.statusWrites).toBe(0);
    expect(await snapshot()).toEqual(before);
  });

  it('reaches a steady state with 0 writes on resync when quantities are not in canonical form', async () => {
    const ns = await createNamespace(client, 'quantities');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(
      client,
      translationService(ns, 'web', {
        resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1000m', memory: '1.5Gi' } },
      }),
    );
    const job = await eventually('migration job', async () => (await status(ns, 'web'))?.status?.migration?.job);
    await completeMigration(client, ns, job);
    await eventually('pods ready', async () => (await makePodsReady(client, ns, 'web')) >= 1);
    await eventually('Ready', async () => condition(await status(ns, 'web'), 'Ready')?.status === 'True');
    // The API server stores the canonical forms: the texts differ from the desired ones, the values do not.
    const deployment = await get(client, RESOURCES.Deployment, ns, 'web');
    expect(deployment?.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: '500m', memory: '1Gi' },
      limits: { cpu: '1', memory: '1536Mi' },
    });

    const snapshot = async () => {
      const objects = [
        ...(await list(client, RESOURCES.Deployment, ns)),
        ...(await list(client, RESOURCES.Service, ns)),
        ...(await list(client, RESOURCES.CronJob, ns)),
      ];
      return Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
    };
    await new Promise((resolve) => setTimeout(resolve, 3000)); // let the controller-manager settle
    await eventually('queue drained', () => operator.controller.queue.length === 0);
    const before = await snapshot();
    const updated = async () => (await list(client, RESOURCES.Event, ns)).filter((e) => e.reason === 'Updated');
    const updatesBefore = await updated();
    const stats = operator.controller.stats;
    const writes = stats.writes;
    for (let i = 0; i < 3; i++) {
      // A resync: the resource is reconciled again with nothing changed.
      const reconciles = stats.reconciles;
      operator.controller.queue.add(`${ns}/web`);
      await eventually(
        'resync reconciled',
        () => stats.reconciles > reconciles && operator.controller.queue.length === 0,
      );
    }
    expect(stats.writes - writes).toBe(0);
    expect(await snapshot()).toEqual(before);
    expect(await updated()).toEqual(updatesBefore);
  });

  it('keeps a second replica passive until the Lease is free', async () => {
    const standby = startOperator('operator-standby');
    await standby.start();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(standby.isLeader).toBe(false);
    expect(standby.controller.stats.reconciles).toBe(0);
    const lease = await get(client, RESOURCES.Lease, 'default', LEASE);
    expect(lease?.spec.holderIdentity).toBe('operator-restarted');

    // A change while the standby waits is handled by the leader only.
    const ns = await createNamespace(client, 'standby');
    await createSecret(client, ns, 'db-app', { uri: 'postgres://x' });
    await create(client, translationService(ns, 'web'));
    await eventually('leader reconciles', async () => (await status(ns, 'web'))?.status?.migration?.job);
    expect(standby.controller.stats.reconciles).toBe(0);

    await operator.stop(); // releases the Lease
    await eventually('standby takes over', () => standby.isLeader && standby.controller.synced, 15_000);
    expect((await get(client, RESOURCES.Lease, 'default', LEASE))?.spec.holderIdentity).toBe('operator-standby');
    await client.request('DELETE', resourcePath(RESOURCES.Service, ns, 'web'));
    await eventually('standby corrects drift', () => get(client, RESOURCES.Service, ns, 'web'));
    expect(standby.controller.stats.reconciles).toBeGreaterThan(0);
  });
});
