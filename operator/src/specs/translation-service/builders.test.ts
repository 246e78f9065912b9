import { settingNames } from '@scriptorium/translation/settings';
import { describe, expect, it } from 'vitest';
import { translationServiceSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { retentionCronJob, workerCronJob } from './cronjobs.ts';
import { deployment, rolloutState } from './deployment.ts';
import { publicUrl, referencedSecretKeys, serveEnv } from './env.ts';
import { fixture, fullSpec } from './fixtures.ts';
import { jobState, migrationJob, revisionOf } from './migration-job.ts';
import { hpa, ingress, podDisruptionBudget, service } from './network.ts';
import { generatedSecrets } from './secrets.ts';

const minimal = fixture();
const minimalSpec = translationServiceSpec.parse(minimal.spec);
const full = fixture(fullSpec);
const fullParsed = translationServiceSpec.parse(full.spec);

function container(obj: KubeObject) {
  const pod = obj.spec.template?.spec ?? obj.spec.jobTemplate.spec.template.spec;
  return pod.containers[0];
}

function expectRestricted(obj: KubeObject) {
  const pod = obj.spec.template?.spec ?? obj.spec.jobTemplate.spec.template.spec;
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  expect(container(obj).securityContext).toEqual({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
    seccompProfile: { type: 'RuntimeDefault' },
  });
}

describe('every child', () => {
  it('is controlled by the TranslationService and labelled as managed', () => {
    const objects = [
      deployment(full, fullParsed, 'r1'),
      service(full),
      podDisruptionBudget(full),
      ingress(full, fullParsed)!,
      hpa(
        fixture({ autoscaling: { maxReplicas: 5 } }),
        translationServiceSpec.parse({ ...minimal.spec, autoscaling: { maxReplicas: 5 } }),
      )!,
      workerCronJob(full, fullParsed),
      retentionCronJob(full, fullParsed),
      migrationJob(full, fullParsed),
      ...generatedSecrets(full, () => 'x'),
    ];
    for (const obj of objects) {
      expect(obj.metadata.namespace).toBe('shop');
      expect(obj.metadata.ownerReferences).toEqual([
        {
          apiVersion: 'scriptorium.dev/v1alpha1',
          kind: 'TranslationService',
          name: 'web',
          uid: full.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(obj.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('scriptorium-operator');
    }
  });
});

describe('deployment', () => {
  it('runs serve on port 3000 with probes, restricted security and the fixed replica count', () => {
    const dep = deployment(full, fullParsed, 'abc');
    expect(dep.spec.replicas).toBe(3);
    expect(dep.spec.template.metadata.annotations['scriptorium.dev/revision']).toBe('abc');
    const c = container(dep);
    expect(c.args).toEqual(['serve']);
    expect(c.ports).toEqual([{ name: 'http', containerPort: 3000, protocol: 'TCP' }]);
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    // A stopping pod serves on until it has left the endpoints (no 502 through an Ingress during a rollout), and the
    // service's own drain (SHUTDOWN_GRACE_MS, 10 s) fits in the grace period after that sleep.
    expect(c.lifecycle).toEqual({ preStop: { sleep: { seconds: 10 } } });
    expect(dep.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(10 + 10);
    expect(c.resources).toEqual(fullSpec.resources);
    expectRestricted(dep);
    expect(dep.spec.selector.matchLabels).toEqual(service(full).spec.selector);
  });

  it('defaults to 2 replicas and leaves replicas to the HPA when autoscaling', () => {
    expect(deployment(minimal, minimalSpec, 'r').spec.replicas).toBe(2);
    const auto = translationServiceSpec.parse({ ...minimal.spec, autoscaling: { minReplicas: 2, maxReplicas: 6 } });
    expect(deployment(minimal, auto, 'r').spec).not.toHaveProperty('replicas');
    expect(hpa(minimal, auto)?.spec).toMatchObject({ minReplicas: 2, maxReplicas: 6 });
    expect(hpa(minimal, minimalSpec)).toBeNull();
  });

  it("sets only variables the image reads (the translation service's settings contract)", () => {
    const read = new Set<string>(settingNames);
    for (const [ts, spec] of [
      [full, fullParsed],
      [minimal, minimalSpec],
    ] as const) {
      const set = [
        ...container(deployment(ts, spec, 'r')).env,
        ...container(migrationJob(ts, spec)).env,
        ...container(workerCronJob(ts, spec)).env,
      ].map((e: { name: string }) => e.name);
      expect(set.length).toBeGreaterThan(5);
      expect(set.filter((name) => !read.has(name))).toEqual([]);
    }
  });

  it('takes secrets from references, never as literal values', () => {
    const env = serveEnv(full, fullParsed);
    const byName = Object.fromEntries(env.map((e) => [e.name, e]));
    expect(byName.DATABASE_URL?.valueFrom).toEqual({ secretKeyRef: { name: 'shop-db-app', key: 'uri' } });
    expect(byName.PROVIDER__API_KEY?.valueFrom).toEqual({ secretKeyRef: { name: 'llm', key: 'api-key' } });
    expect(byName.WORKER_SECRET?.valueFrom).toEqual({ secretKeyRef: { name: 'web-worker-secret', key: 'secret' } });
    // Secrets the image reads from files: mounted from their Secrets, the variable names the file.
    expect(byName.OAUTH__CLIENT_SECRET_FILE?.value).toBe('/var/run/secrets/scriptorium/oauth-client/secret');
    expect(byName.BILLING__WEBHOOK_SECRET_FILE?.value).toBe('/var/run/secrets/scriptorium/billing-webhook/whsec');
    expect(byName.MFA__ENCRYPTION_KEY_FILE?.value).toBe('/var/run/secrets/scriptorium/mfa-key/secret');
    const pod = deployment(full, fullParsed, 'r').spec.template.spec;
    expect(pod.volumes).toEqual(
      expect.arrayContaining([
        {
          name: 'oauth-client',
          secret: { secretName: 'oauth', items: [{ key: 'secret', path: 'secret' }], defaultMode: 0o440 },
        },
        {
          name: 'billing-webhook',
          secret: { secretName: 'billing', items: [{ key: 'whsec', path: 'whsec' }], defaultMode: 0o440 },
        },
        {
          name: 'mfa-key',
          secret: { secretName: 'web-session-secret', items: [{ key: 'secret', path: 'secret' }], defaultMode: 0o440 },
        },
      ]),
    );
    expect(pod.containers[0].volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'oauth-client', mountPath: '/var/run/secrets/scriptorium/oauth-client', readOnly: true },
      ]),
    );
    expect(env.some((e) => e.name === 'OAUTH__CLIENT_SECRET' || e.name === 'BILLING__WEBHOOK_SECRET')).toBe(false);
    expect(byName.OAUTH__CLIENT_ID?.value).toBe(fullParsed.oauth!.clientId);
    expect(JSON.parse(byName.PLANS?.value ?? '[]')).toEqual([
      { name: 'pro', tokensPerPeriod: 1_000_000, periodDays: 30, dailyBudgetCents: 500 },
    ]);
    expect(referencedSecretKeys(fullParsed).map((r) => r.name)).toEqual(['shop-db-app', 'llm', 'oauth', 'billing']);
  });

  it('sets TRUST_PROXY to one hop behind its Ingress, to spec.trustProxy when set, and not at all otherwise', () => {
    const trust = (input: Record<string, unknown>) => {
      const spec = translationServiceSpec.parse({ ...minimal.spec, ...input });
      const env = container(deployment(minimal, spec, 'r')).env as Array<{ name: string; value?: string }>;
      return env.filter((e) => e.name === 'TRUST_PROXY').map((e) => e.value);
    };
    const ingress = { host: 'translate.example.com' };
    expect(trust({})).toEqual([]);
    expect(trust({ ingress })).toEqual(['1']);
    expect(trust({ ingress, trustProxy: '2' })).toEqual(['2']);
    expect(trust({ ingress, trustProxy: 'false' })).toEqual(['false']);
    expect(trust({ ingress, trustProxy: '10.0.0.0/8, fd00::/8' })).toEqual(['10.0.0.0/8, fd00::/8']);
    // Behind a proxy the operator does not manage (a LoadBalancer, a mesh), without spec.ingress.
    expect(trust({ trustProxy: 'true' })).toEqual(['true']);
    expect(serveEnv(full, fullParsed).filter((e) => e.name === 'TRUST_PROXY')).toEqual([
      { name: 'TRUST_PROXY', value: '1' },
    ]);
    // Only the serve container: the migration Job and the CronJobs make no per-IP decisions.
    expect(container(migrationJob(full, fullParsed)).env.map((e: { name: string }) => e.name)).not.toContain(
      'TRUST_PROXY',
    );
    expect(container(workerCronJob(full, fullParsed)).env.map((e: { name: string }) => e.name)).not.toContain(
      'TRUST_PROXY',
    );
  });

  it('refuses a trustProxy the image could not read', () => {
    for (const bad of ['', ' ', '1;rm', '10.0.0.0/8,', 'a b', '"1"', 'x'.repeat(1025)]) {
      expect(translationServiceSpec.safeParse({ ...minimal.spec, trustProxy: bad }).success, bad).toBe(false);
    }
    expect(translationServiceSpec.safeParse({ ...minimal.spec, trustProxy: 2 }).success).toBe(false);
    for (const good of [
      'true',
      'false',
      '0',
      '3',
      'loopback',
      '127.0.0.1',
      '10.0.0.0/8,192.168.1.1',
      '::1, fd00::/8',
    ]) {
      expect(translationServiceSpec.safeParse({ ...minimal.spec, trustProxy: good }).success, good).toBe(true);
    }
  });

  it('reads rollout completion from status', () => {
    const dep = { ...deployment(minimal, minimalSpec, 'r'), metadata: { name: 'web', generation: 2 } };
    expect(rolloutState(undefined).complete).toBe(false);
    expect(
      rolloutState({ ...dep, status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } })
        .complete,
    ).toBe(false);
    expect(
      rolloutState({ ...dep, status: { observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2 } })
        .complete,
    ).toBe(false);
    expect(
      rolloutState({ ...dep, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } })
        .complete,
    ).toBe(true);
  });
});

describe('migration job', () => {
  it('is named by a hash of image and spec, and runs migrate', () => {
    const job = migrationJob(minimal, minimalSpec);
    const rev = revisionOf(minimal, minimalSpec);
    expect(rev).toMatch(/^[0-9a-f]{10}$/);
    expect(job.metadata.name).toBe(`web-migrate-${rev}`);
    expect(container(job).args).toEqual(['migrate']);
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    expectRestricted(job);
    const newImage = translationServiceSpec.parse({ ...minimal.spec, image: 'scriptorium/translation:1.3.0' });
    expect(revisionOf(minimal, newImage)).not.toBe(rev);
    const moreReplicas = translationServiceSpec.parse({ ...minimal.spec, replicas: 7 });
    expect(revisionOf(minimal, moreReplicas)).toBe(rev);
  });

  it('reads the job outcome', () => {
    expect(jobState(undefined)).toBe('running');
    expect(
      jobState({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {},
        status: { conditions: [{ type: 'Complete', status: 'True' }] },
      }),
    ).toBe('succeeded');
    expect(
      jobState({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {},
        status: { conditions: [{ type: 'Failed', status: 'True' }] },
      }),
    ).toBe('failed');
  });
});

describe('service, ingress, pdb', () => {
  it('exposes port 80 to the http port', () => {
    expect(service(minimal).spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }]);
  });
  it('builds the ingress only when asked, with TLS and class', () => {
    expect(ingress(minimal, minimalSpec)).toBeNull();
    const ing = ingress(full, fullParsed)!;
    expect(ing.spec.ingressClassName).toBe('nginx');
    expect(ing.spec.tls).toEqual([{ hosts: ['translate.example.com'], secretName: 'translate-tls' }]);
    expect(publicUrl(full, fullParsed)).toBe('https://translate.example.com');
    expect(publicUrl(minimal, minimalSpec)).toBe('http://web.shop.svc');
  });
  it('allows one API pod down at a time', () => {
    expect(podDisruptionBudget(minimal).spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: service(minimal).spec.selector },
    });
  });
});

describe('cronjobs', () => {
  it('run trigger worker and trigger retention on their schedules with the worker secret', () => {
    const worker = workerCronJob(minimal, minimalSpec);
    const retention = retentionCronJob(minimal, minimalSpec);
    expect(worker.metadata.name).toBe('web-worker');
    expect(worker.spec.schedule).toBe('* * * * *');
    expect(container(worker).args).toEqual(['trigger', 'worker']);
    expect(retention.spec.schedule).toBe('17 3 * * *');
    expect(container(retention).args).toEqual(['trigger', 'retention']);
    expect(worker.spec.concurrencyPolicy).toBe('Forbid');
    const env = Object.fromEntries(container(worker).env.map((e: { name: string }) => [e.name, e]));
    expect(env.TRANSLATION_URL.value).toBe('http://web.shop.svc:80');
    expect(env.WORKER_SECRET.valueFrom.secretKeyRef).toEqual({ name: 'web-worker-secret', key: 'secret' });
    expectRestricted(worker);
  });
});

describe('generated secrets', () => {
  it('makes a worker and a session secret from the injected token source', () => {
    let n = 0;
    const secrets = generatedSecrets(minimal, () => `token-${n++}`);
    expect(secrets.map((s) => s.metadata.name)).toEqual(['web-worker-secret', 'web-session-secret']);
    expect(Buffer.from(secrets[0]?.data.secret, 'base64').toString()).toBe('token-0');
    expect(Buffer.from(secrets[1]?.data.secret, 'base64').toString()).toBe('token-1');
  });
  it('uses 256 random bits by default', () => {
    const [a] = generatedSecrets(minimal);
    expect(Buffer.from(Buffer.from(a?.data.secret, 'base64').toString(), 'base64url')).toHaveLength(32);
  });
});
