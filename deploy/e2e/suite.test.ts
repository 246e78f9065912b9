// The end-to-end suite: one journey on a real cluster, given by KUBECONFIG (make e2e-local: the local
// cluster of tools/cluster; make e2e-kind: kind). Everything it creates lives in one fresh namespace and one
// Helm release of the same unique name, whose operator watches only that namespace; afterAll removes both
// even when a step failed. Steps run in order and each needs the previous ones of its part.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seed, startTestBroker, type TestBroker } from '@scriptorium/harness/test-broker';
import { Block, blockHash, verifyLightEvidence } from '@scriptorium/ledger-protocol';
import { keysCreateArgs } from '@scriptorium/operator';
import { hasChromium, launchBrowser } from '@scriptorium/test-support/browser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, repoRoot } from './config.ts';
import { applyCrds, createNamespace, installOperator, refuseClusterWideOperator } from './install.ts';
import {
  condition,
  http,
  type KubeList,
  type KubeObject,
  kube,
  type PortForward,
  portForward,
  viaIngress,
  waitFor,
} from './kube.ts';
import { type ChainStatus, ledgerPods, type Pod, podReady } from './ledger.ts';

const execFileAsync = promisify(execFile);
const config = loadConfig();
const k = kube(config);
const ns = `${config.namePrefix}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const release = ns;
const operatorName = `${release}-scriptorium-operator`;
const wait = { timeoutMs: config.waitMs };
const forwards: PortForward[] = [];
/** The watch step's NGSI brokers, on this host (closed by afterAll). */
const brokers: TestBroker[] = [];
let failed = false;
/** Where the watch step found its TAMPERED record (the ingress step verifies its proof). */
let tamperedAt: { height: number; index: number } | undefined;

const log = (line: string) => process.stderr.write(`e2e [${ns}]: ${line}\n`);
const manifest = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/** A part of the journey: once one of its steps failed, the later ones fail at once instead of waiting. */
function part(name: string) {
  let broken: string | undefined;
  return async (step: string, body: () => Promise<void>) => {
    if (broken) throw new Error(`not run: the earlier step "${broken}" of ${name} failed`);
    try {
      await body();
    } catch (err) {
      broken = step;
      throw err;
    }
  };
}
const journey = part('the journey');

beforeAll(async () => {
  log(`namespace and Helm release ${ns}; kubectl ${config.kubectl}, helm ${config.helm}`);
  await refuseClusterWideOperator(k);
  await createNamespace(k, ns);
}, 120_000);

afterEach(async (ctx) => {
  // What the cluster looked like at the first failure (before the clean-up removes it).
  if (ctx.task.result?.state === 'fail' && !failed) {
    failed = true;
    await diagnose();
  }
});

afterAll(async () => {
  for (const f of forwards) f.close();
  await Promise.all(brokers.map((b) => b.close()));
  // The last step deletes everything and checks it; this is the safety net when a step failed before it.
  await k.helm(['uninstall', release, '-n', ns, '--ignore-not-found', '--wait', '--timeout', '180s']).catch((err) => {
    log(`helm uninstall: ${err instanceof Error ? err.message : err}`);
  });
  await k
    .kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=240s'], { timeoutMs: 260_000 })
    .catch((err) => log(`delete namespace ${ns}: ${err instanceof Error ? err.message : err}`));
}, 900_000);

async function diagnose(): Promise<void> {
  const show = async (title: string, args: string[]) => {
    const out = await k.kubectl(args).catch((err: Error) => err.message);
    process.stderr.write(`--- ${title}\n${out.split('\n').slice(-80).join('\n')}\n`);
  };
  await show('objects', ['-n', ns, 'get', 'translationservices,ledgerclusters,all,jobs,cronjobs,pvc', '-o', 'wide']);
  await show('events', ['-n', ns, 'get', 'events', '--sort-by=.lastTimestamp']);
  await show('operator log', ['-n', ns, 'logs', `deployment/${operatorName}`, '--tail=60']);
  await show('LedgerCluster', ['-n', ns, 'describe', 'ledgercluster', 'ledger']);
}

describe('Scriptorium on a real cluster', () => {
  it('installs the CRDs and the operator chart with helm; the operator holds its Lease', () =>
    journey('operator', async () => {
      await applyCrds(k);
      await installOperator(k, config, ns, release);
      await k.kubectl([
        '-n',
        ns,
        'rollout',
        'status',
        `deployment/${operatorName}`,
        `--timeout=${config.waitMs / 1000}s`,
      ]);
      const holder = await waitFor(
        'the operator to hold its leader Lease',
        async () => {
          const lease = await k.getJson<{ spec: { holderIdentity?: string } }>([
            '-n',
            ns,
            'lease',
            'scriptorium-operator',
          ]);
          return lease.spec.holderIdentity || undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(holder).toMatch(new RegExp(`^${operatorName}-`));
    }));

  it('runs PostgreSQL and the sample TranslationService to Ready, after its migration Job completed', () =>
    journey('translation', async () => {
      const postgres = manifest('deploy/postgres.yaml').replaceAll(
        'docker.io/library/postgres:17-alpine',
        config.postgresImage,
      );
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: postgres });
      await k.kubectl(['-n', ns, 'rollout', 'status', 'statefulset/postgres', `--timeout=${config.waitMs / 1000}s`]);
      const sample = manifest('deploy/samples/translation-service.yaml')
        .replaceAll('scriptorium/translation:dev', config.translationImage)
        .replaceAll('imagePullPolicy: IfNotPresent', `imagePullPolicy: ${config.pullPolicy}`);
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: sample });
      await waitFor(
        'TranslationService translation Ready=True',
        async () => {
          const ts = await k.getJson(['-n', ns, 'translationservice', 'translation']);
          return condition(ts, 'Ready')?.status === 'True' ? ts : undefined;
        },
        wait,
      );
      const jobs = await k.getJson<KubeList<KubeObject & { status: { succeeded?: number } }>>([
        '-n',
        ns,
        'jobs',
        '-l',
        'app.kubernetes.io/instance=translation,app.kubernetes.io/component=migration',
      ]);
      expect(jobs.items.length).toBeGreaterThan(0);
      for (const job of jobs.items) expect(job.status.succeeded, `${job.metadata.name} succeeded`).toBe(1);
      const deployment = await k.getJson<KubeObject & { status: { readyReplicas?: number } }>([
        '-n',
        ns,
        'deployment',
        'translation',
      ]);
      expect(deployment.status.readyReplicas).toBe(2);
    }));

  it('translates through the Service with an API key made by the keys CLI of the image', () =>
    journey('translate', async () => {
      // The key is printed once by the CLI inside an API pod (its DATABASE_URL comes from the Secret); it is
      // never logged here.
      // (kubectl -n NS exec deployment/translation -- <the image's CLI> keys create --user …); the key's
      // organization gets the image's default plan, the sample's `free`.
      const issued = await k.kubectl(keysCreateArgs(ns, 'translation', ['--user', 'e2e@example.com']));
      const { apiKey } = JSON.parse(issued) as { apiKey: string };
      expect(apiKey).toMatch(/^sk_live_/);
      const forward = await portForward(config, ns, 'service/translation', 80);
      forwards.push(forward);
      await waitFor(
        'GET /readyz through the port-forward',
        async () => ((await http(forward.port, '/readyz')).status === 200 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      const batch = {
        sourceLocale: 'en',
        targetLocale: 'fr',
        tier: 'cheap',
        items: [
          { id: 'a', text: 'Hello {name}, you have {count, plural, one {# file} other {# files}}.', isIcu: true },
        ],
        style: {},
        glossary: [],
      };
      const refused = await http(forward.port, '/api/v1/translate', { method: 'POST', body: batch });
      expect(refused.status).toBe(401);
      const answer = await http(forward.port, '/api/v1/translate', {
        method: 'POST',
        body: batch,
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(answer.status, answer.body).toBe(200);
      const result = answer.json<{ translations: { id: string; text: string }[]; tokensIn: number; model: string }>();
      expect(result.translations).toHaveLength(1);
      expect(result.translations[0]?.id).toBe('a');
      expect(result.translations[0]?.text).toContain('{name}');
      expect(result.translations[0]?.text).not.toBe(batch.items[0]?.text);
      expect(result.tokensIn).toBeGreaterThan(0);
      expect(result.model).toBe('pseudo-cheap');
    }));

  it('signs in through a local OAuth server pod, issues a key with the session and translates with it, all through the ingress controller at the Ingress host (the OAuth client and Ingress wired by the operator)', () =>
    journey('sign-in', async () => {
      // The local GitHub-compatible OAuth server (packages/github-oauth-local, dependency-free) runs from a ConfigMap
      // in the translation image's Node; the TranslationService gets an OAuth client pointing at it.
      const clientSecret = randomBytes(24).toString('base64url');
      await k.kubectl([
        '-n',
        ns,
        'create',
        'secret',
        'generic',
        'github-oauth',
        `--from-literal=client-secret=${clientSecret}`,
      ]);
      await k.kubectl([
        '-n',
        ns,
        'create',
        'configmap',
        'github-oauth-local',
        `--from-file=server.ts=${join(repoRoot, 'packages/github-oauth-local/src/server.ts')}`,
        `--from-file=main.ts=${join(repoRoot, 'packages/github-oauth-local/src/main.ts')}`,
      ]);
      const labels = { 'app.kubernetes.io/name': 'github-oauth-local' };
      const oauthServer = [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'github-oauth', labels },
          spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: {
              metadata: { labels },
              spec: {
                securityContext: { runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } },
                containers: [
                  {
                    name: 'server',
                    image: config.translationImage,
                    imagePullPolicy: config.pullPolicy,
                    command: ['node', '/srv/main.ts'],
                    env: [
                      { name: 'PORT', value: '8080' },
                      { name: 'OAUTH_CLIENT_ID', value: 'e2e-client' },
                      { name: 'OAUTH_CLIENT_SECRET_FILE', value: '/var/run/secrets/oauth/client-secret' },
                    ],
                    ports: [{ name: 'http', containerPort: 8080 }],
                    readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 2 },
                    securityContext: {
                      allowPrivilegeEscalation: false,
                      readOnlyRootFilesystem: true,
                      capabilities: { drop: ['ALL'] },
                    },
                    volumeMounts: [
                      { name: 'code', mountPath: '/srv', readOnly: true },
                      { name: 'secret', mountPath: '/var/run/secrets/oauth', readOnly: true },
                    ],
                  },
                ],
                volumes: [
                  { name: 'code', configMap: { name: 'github-oauth-local' } },
                  { name: 'secret', secret: { secretName: 'github-oauth', defaultMode: 0o444 } },
                ],
              },
            },
          },
        },
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'github-oauth', labels },
          spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
        },
      ];
      for (const obj of oauthServer) await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: JSON.stringify(obj) });
      await k.kubectl(['-n', ns, 'rollout', 'status', 'deployment/github-oauth', `--timeout=${config.waitMs / 1000}s`]);

      // The browser's half of the flow goes through the cluster's ingress controller, as a browser would: the API at
      // its Ingress host (the operator's Ingress), the OAuth server's authorize page at its own (an Ingress made here,
      // as github.com is a public host). The API pods reach the token and user endpoints in the cluster.
      // Host names of this run only (a namespace left over from an interrupted run keeps its own).
      const host = `translation.${ns}.e2e.test`;
      const githubHost = `github.${ns}.e2e.test`;
      const web = (url: string | URL, options?: Parameters<typeof viaIngress>[2]) =>
        viaIngress(config.ingress.address, url, options);
      // Before its Ingress exists, the controller has no route for the OAuth server's host: its own 404.
      const unrouted = await web(`http://${githubHost}/healthz`);
      expect(unrouted.status).toBe(404);
      expect(unrouted.body.trim()).toBe('404 page not found');
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'networking.k8s.io/v1',
          kind: 'Ingress',
          metadata: { name: 'github-oauth', labels },
          spec: {
            ingressClassName: config.ingress.className,
            rules: [
              {
                host: githubHost,
                http: {
                  paths: [
                    {
                      path: '/',
                      pathType: 'Prefix',
                      backend: { service: { name: 'github-oauth', port: { name: 'http' } } },
                    },
                  ],
                },
              },
            ],
          },
        }),
      });
      await waitFor(
        `GET http://${githubHost}/healthz through the ingress controller`,
        async () => ((await web(`http://${githubHost}/healthz`)).status === 200 ? true : undefined),
        { timeoutMs: 60_000 },
      );

      // The OAuth client, the Ingress and the public URL: the operator mounts the client secret as a file and sets
      // exactly the image's variables (a new revision of the API Deployment).
      const inCluster = `http://github-oauth.${ns}.svc`;
      await k.kubectl([
        '-n',
        ns,
        'patch',
        'translationservice',
        'translation',
        '--type=merge',
        '-p',
        JSON.stringify({
          spec: {
            oauth: {
              clientId: 'e2e-client',
              clientSecretRef: { name: 'github-oauth', key: 'client-secret' },
              authorizeUrl: `http://${githubHost}/login/oauth/authorize`,
              tokenUrl: `${inCluster}/login/oauth/access_token`,
              apiUrl: `${inCluster}/api/v3`,
            },
            ingress: { host, className: config.ingress.className },
          },
        }),
      ]);
      const deployment = await waitFor(
        'the API Deployment to carry the OAuth client',
        async () => {
          const d = await k.getJson<KubeObject & { spec: { template: { spec: Pod['spec'] } } }>([
            '-n',
            ns,
            'deployment',
            'translation',
          ]);
          const env = d.spec.template.spec.containers[0]?.env ?? [];
          return env.some((e) => e.name === 'OAUTH__CLIENT_ID') ? d : undefined;
        },
        wait,
      );
      const env = Object.fromEntries(
        (deployment.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
      );
      expect(env.PUBLIC_BASE_URL).toBe(`http://${host}`);
      expect(env.OAUTH__CLIENT_SECRET_FILE).toBe('/var/run/secrets/scriptorium/oauth-client/client-secret');
      expect(env.OAUTH__CLIENT_SECRET).toBeUndefined();
      const ingress = await k.getJson<KubeObject & { spec: { ingressClassName?: string; rules: { host: string }[] } }>([
        '-n',
        ns,
        'ingress',
        'translation',
      ]);
      expect(ingress.spec.rules[0]?.host).toBe(host);
      expect(ingress.spec.ingressClassName).toBe(config.ingress.className);
      await k.kubectl(['-n', ns, 'rollout', 'status', 'deployment/translation', `--timeout=${config.waitMs / 1000}s`]);
      // `rollout status` returns while the old revision's pods are still terminating, and they serve on through
      // their preStop sleep (so that no request gets a 502), without the OAuth client: a callback routed to one
      // of them would answer 503. The sign-in starts once only the new revision's pods are left.
      const replicas = (deployment.spec as { replicas?: number }).replicas ?? 1;
      await waitFor(
        `only the new revision's ${replicas} API pods (the old ones gone)`,
        async () => {
          const pods = await k.getJson<KubeList<Pod>>([
            '-n',
            ns,
            'pods',
            '-l',
            'app.kubernetes.io/component=api,app.kubernetes.io/instance=translation',
          ]);
          return pods.items.length === replicas && pods.items.every(podReady) ? true : undefined;
        },
        wait,
      );

      // The new revision answers at the Ingress host once the controller routes it there (an old pod would not
      // start the sign-in).
      const start = await waitFor(
        `GET http://${host}/auth/github through the ingress controller to start the sign-in`,
        async () => {
          // Several in a row: the controller balances round-robin, so each of its endpoints answers one.
          let res: Awaited<ReturnType<typeof web>> | undefined;
          for (let i = 0; i <= replicas; i++) {
            res = await web(`http://${host}/auth/github`);
            if (res.status !== 302) return undefined;
          }
          return res;
        },
        { timeoutMs: 60_000 },
      );
      // Another host at the same address gets the controller's 404, not the API's.
      const stranger = await web(`http://unknown.${ns}.e2e.test/readyz`);
      expect(stranger.status).toBe(404);
      expect(stranger.body.trim()).toBe('404 page not found');
      const cookies = (res: { headers: Record<string, string | string[] | undefined> }) =>
        ([] as string[]).concat(res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!);
      const authorize = new URL(String(start.headers.location));
      expect(`${authorize.origin}${authorize.pathname}`).toBe(`http://${githubHost}/login/oauth/authorize`);
      expect(authorize.searchParams.get('redirect_uri')).toBe(`http://${host}/auth/github/callback`);
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      authorize.searchParams.set('login', 'octo-dev');
      const approved = await web(authorize);
      expect(approved.status, approved.body).toBe(302);
      // Back to the callback at PUBLIC_BASE_URL, the Ingress host.
      const back = new URL(String(approved.headers.location));
      expect(`${back.origin}${back.pathname}`).toBe(`http://${host}/auth/github/callback`);
      const done = await web(back, { headers: { cookie: cookies(start).join('; ') } });
      expect(done.status, done.body).toBe(302);
      const session = cookies(done).find((c) => c.startsWith('session-token='));
      expect(session).toBeDefined();
      const me = await web(`http://${host}/api/v1/me`, { headers: { cookie: session! } });
      expect(me.status, me.body).toBe(200);
      expect(me.json<{ email: string }>().email).toBe('octo.dev@example.com');
      const issued = await web(`http://${host}/api/v1/keys`, { method: 'POST', headers: { cookie: session! } });
      expect(issued.status, issued.body).toBe(200);
      const { apiKey } = issued.json<{ apiKey: string }>();
      const translated = await web(`http://${host}/api/v1/translate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}` },
        body: {
          sourceLocale: 'en',
          targetLocale: 'de',
          tier: 'cheap',
          items: [{ id: 'a', text: 'Hi' }],
          style: {},
          glossary: [],
        },
      });
      expect(translated.status, translated.body).toBe(200);
      expect(translated.json<{ translations: { id: string }[] }>().translations[0]?.id).toBe('a');
    }));

  it('runs a Job from each CronJob (worker, retention) to completion', () =>
    journey('cronjobs', async () => {
      for (const which of ['worker', 'retention']) {
        await k.kubectl(['-n', ns, 'create', 'job', `e2e-${which}`, `--from=cronjob/translation-${which}`]);
      }
      for (const which of ['worker', 'retention']) {
        const job = `e2e-${which}`;
        // Each attempt (pod) with its phase and output: what a failure shows, and where the answer is read.
        const attempts = async () => {
          const pods = await k.getJson<KubeList<Pod>>(['-n', ns, 'pods', '-l', `job-name=${job}`]);
          return Promise.all(
            pods.items.map(async (pod) => ({
              name: pod.metadata.name,
              phase: pod.status.phase,
              log: await k.kubectl(['-n', ns, 'logs', pod.metadata.name]).catch((e: Error) => e.message),
            })),
          );
        };
        const done = await waitFor(
          `Job ${job} Complete (or Failed)`,
          async () => {
            const obj = await k.getJson(['-n', ns, 'job', job]);
            if (condition(obj, 'Complete')?.status === 'True') return 'Complete';
            if (condition(obj, 'Failed')?.status === 'True') return 'Failed';
            return undefined;
          },
          { ...wait, intervalMs: 1000 },
        );
        const tried = await attempts();
        // One line (a CI log's summary shows the first line of a failure): each attempt's phase and last output line.
        const shown = tried.map((a) => `${a.name} ${a.phase}: ${a.log.trim().split('\n').pop()}`).join(' | ');
        expect(done, `Job ${job}, its attempts: ${shown}`).toBe('Complete');
        if (tried.length > 1) log(`Job ${job} needed ${tried.length} attempts: ${shown}`);
        // `trigger` prints the JSON answer of /api/worker or /api/retention.
        const succeeded = tried.find((a) => a.phase === 'Succeeded');
        const answer = succeeded?.log.trim().split('\n').pop() ?? '';
        expect(() => JSON.parse(answer), `${job} printed no JSON answer; its attempts: ${shown}`).not.toThrow();
      }
    }));

  // ---- LedgerCluster ------------------------------------------------------------------------------------
  // Runs when the installed operator reconciles LedgerClusters: its ClusterRole (read at run time) grants the
  // StatefulSets a LedgerCluster is made of. Until the reconciler lands, these steps are skipped, not faked.
  const ledger = part('the LedgerCluster');
  /**
   * The sample LedgerCluster with this run's image, and an idle chain that makes an empty block every
   * E2E_EMPTY_BLOCK_INTERVAL_MS instead of every minute: the steps that wait for blocks (height ≥ 2, a killed
   * validator catching up, membership changes) see them within seconds. The same manifest at every apply: a
   * different interval would roll the validators.
   */
  const ledgerSample = () => {
    const sample = manifest('deploy/samples/ledger-cluster.yaml').replaceAll(
      'scriptorium/ledger-node:dev',
      config.ledgerImage,
    );
    const idle = /^(\s*emptyBlockIntervalMs:) \d+/m;
    if (!idle.test(sample))
      throw new Error('deploy/samples/ledger-cluster.yaml sets no consensus.emptyBlockIntervalMs');
    return sample.replace(idle, `$1 ${config.emptyBlockIntervalMs}`);
  };
  let ledgerReconciler: boolean | undefined;
  const ledgerAvailable = async () => {
    if (ledgerReconciler === undefined) {
      const role = await k.getJson<{ rules: { apiGroups?: string[]; resources?: string[] }[] }>([
        'clusterrole',
        operatorName,
      ]);
      ledgerReconciler = role.rules.some((r) => r.apiGroups?.includes('apps') && r.resources?.includes('statefulsets'));
      if (!ledgerReconciler)
        log('the operator has no LedgerCluster reconciler (no StatefulSet rights): ledger steps skipped');
    }
    return ledgerReconciler;
  };
  const { validatorPods, withLedger, chains, expectAgreement } = ledgerPods(k, config, ns);

  it('runs the sample 4-validator LedgerCluster: 4 pods Running, blocks finalized', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('validators', () =>
      journey('ledger', async () => {
        const sample = ledgerSample();
        await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: sample });
        let seen = '';
        const pods = await waitFor(
          '4 validator pods Running and Ready',
          async () => {
            const list = await validatorPods();
            seen = list.map((p) => `${p.metadata.name}=${p.status.phase}`).join(', ');
            return list.length === 4 && list.every(podReady) ? list : undefined;
          },
          { ...wait, describe: () => seen },
        );
        const heights = await waitFor(
          'blocks finalized on every node (height ≥ 2)',
          async () => {
            const status = await chains(pods);
            return status.every((s) => s.height >= 2) ? status.map((s) => s.height) : undefined;
          },
          wait,
        );
        log(`ledger heights: ${heights.join(', ')}`);
        const lc = await waitFor(
          'LedgerCluster ledger Ready=True with 4 active validators',
          async () => {
            const obj = await k.getJson(['-n', ns, 'ledgercluster', 'ledger']);
            return condition(obj, 'Ready')?.status === 'True' && obj.status?.activeValidators === 4 ? obj : undefined;
          },
          wait,
        );
        expect(lc.status?.quorum).toBe(3);
      }),
    );
  });

  it('kubectl scriptorium (make kubectl-plugin): status prints the LedgerCluster; keys create makes an API key', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('plugin', () =>
      journey('plugin', async () => {
        // Installed the documented way, and found by kubectl itself as a plugin on PATH.
        const bin = mkdtempSync(join(tmpdir(), 'e2e-plugin-'));
        await execFileAsync('make', ['--no-print-directory', 'kubectl-plugin', `BINDIR=${bin}`], { cwd: repoRoot });
        const env = { ...process.env, KUBECONFIG: config.kubeconfig, PATH: `${bin}:${process.env.PATH ?? ''}` };
        const plugin = async (args: string[]) =>
          (await execFileAsync(config.kubectl, ['scriptorium', ...args], { env, timeout: 120_000 })).stdout;
        const screen = await waitFor(
          'kubectl scriptorium status: 4 validators with heights, quorum 3, Ready=True',
          async () => {
            const out = await plugin(['status', 'ledger', '-n', ns]);
            return /Ready=True/.test(out) && /active 4 · quorum 3/.test(out) ? out : undefined;
          },
          wait,
        );
        log(`kubectl scriptorium status:\n${screen}`);
        for (const v of ['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3']) {
          expect(screen).toMatch(new RegExp(`^${v} +validator +\\d+ +Ready$`, 'm'));
        }
        const issued = JSON.parse(
          await plugin(['keys', 'create', 'translation', '-n', ns, '--user', 'e2e-plugin@example.com']),
        ) as { apiKey: string };
        expect(issued.apiKey).toMatch(/^sk_live_/);
      }),
    );
  });

  it('the API server refuses a change of the genesis with a readable message (CEL in the CRD)', () =>
    journey('genesis', async () => {
      // Applied again (a no-op when the step above ran): the refusal needs no reconciler.
      const sample = ledgerSample();
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: sample });
      const refusal = await k
        .kubectl([
          '-n',
          ns,
          'patch',
          'ledgercluster',
          'ledger',
          '--type=merge',
          '-p',
          '{"spec":{"genesis":{"chainId":"other"}}}',
        ])
        .then(
          () => 'accepted',
          (err: Error) => err.message,
        );
      expect(refusal).toContain('genesis is immutable once set');
    }));

  it('/chain agrees on every node: same block at a common height', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('agreement', async () => {
      const { status, common } = await expectAgreement(await validatorPods());
      for (const s of status) {
        expect(s.validators).toBe(4);
        expect(s.quorum).toBe(3);
      }
      log(`agreement at height ${common}`);
    });
  });

  it('a validator pod killed with --force comes back and catches up', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('kill', async () => {
      const before = await validatorPods();
      const victim = before[1];
      if (!victim) throw new Error('no second validator pod');
      const heightBefore = Math.max(...(await chains(before)).map((s) => s.height));
      await k.kubectl(['-n', ns, 'delete', 'pod', victim.metadata.name, '--grace-period=0', '--force']);
      const pods = await waitFor(
        `${victim.metadata.name} back (new pod Running and Ready)`,
        async () => {
          const list = await validatorPods();
          const again = list.find((p) => p.metadata.name === victim.metadata.name);
          return again && again.metadata.uid !== victim.metadata.uid && podReady(again) && list.length === 4
            ? list
            : undefined;
        },
        wait,
      );
      await waitFor(
        `${victim.metadata.name} caught up with the others`,
        async () => {
          const status = await chains(pods);
          const mine = status[1]?.height ?? 0;
          const others = Math.max(...status.filter((_, i) => i !== 1).map((s) => s.height));
          return mine > heightBefore && mine >= others - 1 ? true : undefined;
        },
        wait,
      );
      await expectAgreement(pods);
    });
  });

  it('scales the LedgerCluster 4 → 5 → 4 (kubectl scale): members join and leave the active set', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('scale', async () => {
      const scaleTo = async (n: number) => {
        await k.kubectl(['-n', ns, 'scale', 'ledgercluster/ledger', `--replicas=${n}`]);
        let seen = '';
        const pods = await waitFor(
          `${n} validators: pods Ready, ${n} active in status and on every node's /chain`,
          async () => {
            const lc = await k.getJson(['-n', ns, 'ledgercluster', 'ledger']);
            const list = await validatorPods();
            seen = `active ${lc.status?.activeValidators}, pending ${JSON.stringify(lc.status?.pendingChange ?? null)}, pods ${list.length}`;
            if (lc.status?.activeValidators !== n || lc.status?.pendingChange || list.length !== n) return undefined;
            if (!list.every(podReady)) return undefined;
            const status = await chains(list);
            return status.every((c) => c.validators === n) ? list : undefined;
          },
          { ...wait, intervalMs: 3000, describe: () => seen },
        );
        await expectAgreement(pods);
      };
      await scaleTo(5);
      await scaleTo(4);
      // Each change is reported: submitted to the chain, then finalized (an ADD and a REMOVE).
      const events = await k.getJson<KubeList<{ reason: string; involvedObject: { kind: string } }>>([
        '-n',
        ns,
        'events',
      ]);
      const finalized = events.items.filter(
        (e) => e.involvedObject.kind === 'LedgerCluster' && e.reason === 'MembershipChangeFinalized',
      );
      expect(finalized.length, 'MembershipChangeFinalized Events').toBeGreaterThanOrEqual(1);
    });
  });

  it('watches two NGSI-v2 brokers outside the cluster: a tamper on the federated one → a TAMPERED record on every validator', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('watch', async () => {
      // Brokers outside the cluster, as a city's usually are: the harness's test broker, run by this process on this
      // host at the address the pods reach it by (E2E_HOST_ADDRESS), never an image: primary and federated, seeded
      // alike (50 entities × 3 attributes). They serve until afterAll: the validators keep watching them.
      for (let i = 0; i < 2; i++) {
        const broker = await startTestBroker({ host: config.hostAddress, port: 0 });
        seed(broker, { count: 50, attrs: 3 });
        brokers.push(broker);
      }
      const [primary, federated] = brokers as [TestBroker, TestBroker];
      await k.kubectl([
        '-n',
        ns,
        'patch',
        'ledgercluster',
        'ledger',
        '--type=merge',
        '-p',
        JSON.stringify({
          spec: {
            brokers: {
              primary: { name: 'primary', url: primary.url },
              federated: [{ name: 'federated', url: federated.url }],
              pollIntervalSeconds: 5,
            },
          },
        }),
      ]);
      let seen = '';
      const pods = await waitFor(
        'every validator rolled with the broker settings, Ready',
        async () => {
          const list = await validatorPods();
          seen = list
            .map(
              (p) =>
                `${p.metadata.name}:${podReady(p)}:${(p.spec.containers[0]?.env ?? []).some((e) => e.name === 'NODE_BROKER__PRIMARY_URL')}`,
            )
            .join(', ');
          const rolled = list.every(
            (p) => podReady(p) && (p.spec.containers[0]?.env ?? []).some((e) => e.name === 'NODE_BROKER__PRIMARY_URL'),
          );
          return list.length === 4 && rolled ? list : undefined;
        },
        { ...wait, intervalMs: 3000, describe: () => seen },
      );
      // The tamper: an ordinary NGSI-v2 attribute update on the federated broker, as a client would make it.
      const tampered = -4242;
      const answer = await fetch(`${federated.url}/v2/entities/urn%3Angsi-ld%3ASensor%3A000007/attrs?type=Sensor`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ temperature: { type: 'Number', value: tampered } }),
      });
      expect(answer.status, await answer.text()).toBe(204);
      log(`tampered urn:ngsi-ld:Sensor:000007 temperature on the federated broker at ${federated.url}`);
      // Every validator's own chain holds the TAMPERED record (one history: the same block on each).
      interface Rec {
        id: string;
        entity?: string;
        attribute?: string;
        verdict?: string;
        observed?: { value?: unknown };
      }
      const found = await waitFor(
        'a TAMPERED record for Sensor:000007 on every validator',
        async () => {
          const where = await Promise.all(
            pods.map((pod) =>
              withLedger(pod, async (get) => {
                const { height } = await get<ChainStatus>('/chain');
                for (let h = height; h >= Math.max(1, height - 400); h--) {
                  const block = await get<{ records: Rec[] }>(`/blocks/${h}`);
                  const i = block.records.findIndex(
                    (r) =>
                      r.verdict === 'TAMPERED' &&
                      r.entity === 'urn:ngsi-ld:Sensor:000007' &&
                      r.attribute === 'temperature' &&
                      r.observed?.value === tampered,
                  );
                  if (i >= 0) return `${h}/${i}/${block.records[i]?.id}`;
                }
                return undefined;
              }),
            ),
          );
          return where.every(Boolean) ? where : undefined;
        },
        { ...wait, intervalMs: 5000 },
      );
      expect(new Set(found).size, `where each validator holds it: ${found.join(' ')}`).toBe(1);
      log(`TAMPERED record at height/index/id ${found[0]} on every validator`);
      const [h, i] = (found[0] ?? '').split('/').map(Number);
      tamperedAt = { height: h as number, index: i as number };
    });
  });

  it('serves /ui and a proof through the ingress controller at the LedgerCluster Ingress host (its paths only); the console verifies the proof in Chromium', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('ingress', async () => {
      // Host name of this run only, as in the sign-in step; requests go to the cluster's ingress controller.
      const host = `ledger.${ns}.e2e.test`;
      const web = (path: string, options?: Parameters<typeof viaIngress>[2]) =>
        viaIngress(config.ingress.address, `http://${host}${path}`, options);
      await k.kubectl([
        '-n',
        ns,
        'patch',
        'ledgercluster',
        'ledger',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { ingress: { host, className: config.ingress.className } } }),
      ]);
      interface IngressPath {
        path: string;
        pathType: 'Exact' | 'Prefix';
        backend: { service: { name: string; port: { name: string } } };
      }
      const ingress = await waitFor(
        'the LedgerCluster Ingress',
        async () => {
          try {
            return await k.getJson<
              KubeObject & {
                spec: { ingressClassName?: string; rules: Array<{ host: string; http: { paths: IngressPath[] } }> };
              }
            >(['-n', ns, 'ingress', 'ledger']);
          } catch {
            return undefined;
          }
        },
        wait,
      );
      expect(ingress.spec.ingressClassName).toBe(config.ingress.className);
      expect(ingress.spec.rules[0]?.host).toBe(host);
      const paths = ingress.spec.rules[0]?.http.paths ?? [];
      expect(paths.map((p) => `${p.pathType} ${p.path}`)).toEqual([
        'Exact /health',
        'Exact /chain',
        'Prefix /blocks',
        'Prefix /proof',
        'Prefix /evidence',
        'Exact /checkpoint',
        'Exact /checkpoint/proof',
        'Exact /checkpoint/witnesses',
        'Prefix /ui',
      ]);
      // The validators speak HTTPS in tls mode server: Traefik learns the backend's scheme from an annotation of
      // the Service (the operator applies the Service server-side, so a field of another manager stays).
      const [pod] = await validatorPods();
      if (!pod) throw new Error('no validator pod');
      const tls = (pod.spec.containers[0]?.env ?? []).some((e) => e.name === 'NODE_TLS__ENABLED' && e.value === 'true');
      if (tls) {
        await k.kubectl([
          '-n',
          ns,
          'annotate',
          '--overwrite',
          'service',
          paths[0]?.backend.service.name ?? '',
          'traefik.ingress.kubernetes.io/service.serversscheme=https',
        ]);
      }
      // The controller routes the host once it has read the Ingress (and the annotation): until then its own 404.
      await waitFor(
        `GET http://${host}/chain through the ingress controller`,
        async () => ((await web('/chain')).status === 200 ? true : undefined),
        { timeoutMs: 60_000 },
      );
      const page = await web('/ui');
      expect(page.status).toBe(200);
      const csp = String(page.headers['content-security-policy'] ?? '');
      expect(csp).toMatch(/script-src 'nonce-[^']+' 'self'/);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
      expect(script, 'the page names its built script').toBeDefined();
      expect((await web(script ?? '')).status).toBe(200);
      expect((await web('/ui/peers')).status).toBe(200);
      expect((await web('/health')).status).toBe(200);
      // The peer, membership, admin and metrics routes are not routed: the controller's own 404, not the node's.
      for (const [method, path] of [
        ['GET', '/peers'],
        ['POST', '/membership'],
        ['POST', '/consensus'],
        ['POST', '/mempool'],
        ['POST', '/admin/submit?count=1'],
        ['GET', '/metrics'],
        ['GET', '/ready'],
        ['GET', '/chainx'],
        ['GET', '/uix'],
      ] as const) {
        const refused = await web(path, { method });
        expect(refused.status, `${method} ${path}`).toBe(404);
        expect(refused.body.trim(), `${method} ${path}`).toBe('404 page not found');
      }
      // A record's light evidence through the Ingress, verified with the ledger's one verifier against the genesis the
      // operator published (the genesis ConfigMap), as `kubectl scriptorium verify-proof` pins it.
      const at = tamperedAt ?? { height: 1, index: 0 };
      const read = async (path: string) => {
        const answer = await web(path);
        if (answer.status !== 200) throw new Error(`GET http://${host}${path}: ${answer.status} ${answer.body}`);
        return answer.json();
      };
      const genesisCm = await k.getJson<{ data: Record<string, string> }>(['-n', ns, 'configmap', 'ledger-genesis']);
      const genesis = Block.parse(JSON.parse(genesisCm.data['genesis.json'] ?? 'null'));
      const report = verifyLightEvidence(await read(`/evidence/${at.height}/${at.index}`), genesis);
      expect(report.ok, report.lines.join('; ')).toBe(true);
      log(
        `through the ingress controller at ${host}: /ui, its script, and record ${at.index} of block ${at.height} verified`,
      );
      if (hasChromium) {
        // Chromium resolves the Ingress host to the controller's address, as DNS would.
        const { host: address, port } = config.ingress.address;
        const browser = await launchBrowser([`--host-resolver-rules=MAP ${host} ${address}:${port}`]);
        try {
          const tab = await browser.newPage();
          await tab.goto(
            `http://${host}/ui#/verify/proof/${at.height}/${at.index}?genesis=${blockHash(genesis.header)}`,
          );
          const verdict = tab.locator('[data-verdict]').first();
          await verdict.waitFor({ timeout: 120_000 });
          expect(await verdict.getAttribute('data-verdict')).toBe('valid');
        } finally {
          await browser.close();
        }
      }
    });
  });

  // ---- The local cluster's egress firewall ----------------------------------------------------------------
  it('a pod resolves cluster names but reaches no address outside the machine (E2E_EGRESS_PROBE)', async (ctx) => {
    const probe = config.egressProbe;
    if (!probe) ctx.skip();
    if (!probe) return;
    const script = `
const dns = require('node:dns').promises;
const net = require('node:net');
(async () => {
  const a = await dns.resolve4('kubernetes.default.svc.cluster.local').catch((e) => [e.code]);
  const s = net.connect({ host: process.argv[1], port: Number(process.argv[2]), timeout: 5000 });
  const done = (egress) => { console.log(JSON.stringify({ dns: a, egress })); process.exit(0); };
  s.on('connect', () => done('open'));
  s.on('timeout', () => done('dropped'));
  s.on('error', (e) => done('error ' + e.code));
})();`;
    // Without masquerading a pod's packet to the outside could also die for want of a route back, so the
    // proof is the firewall's own DROP counters rising (read with iptables on this host, the cluster's node).
    const dropped = async () => {
      const { stdout } = await execFileAsync('iptables', ['-w', '-t', 'mangle', '-L', probe.chain, '-v', '-x', '-n']);
      return stdout
        .split('\n')
        .filter((line) => /\sDROP\s/.test(line))
        .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0);
    };
    const droppedBefore = await dropped();
    await k.kubectl(
      [
        '-n',
        ns,
        'run',
        'egress-probe',
        `--image=${probe.image}`,
        '--image-pull-policy=IfNotPresent',
        '--restart=Never',
      ].concat(['--command', '--', 'node', '-e', script, probe.host, String(probe.port)]),
    );
    const phase = await waitFor(
      'the egress probe pod to finish',
      async () => {
        const pod = await k.getJson<Pod>(['-n', ns, 'pod', 'egress-probe']);
        return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed' ? pod.status.phase : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const out = (await k.kubectl(['-n', ns, 'logs', 'egress-probe'])).trim();
    expect(phase, out).toBe('Succeeded');
    const result = JSON.parse(out.split('\n').pop() ?? '{}') as { dns: string[]; egress: string };
    expect(result.dns).toEqual(['10.96.0.1']);
    expect(result.egress, `a pod connecting to ${probe.host}:${probe.port}`).toBe('dropped');
    expect(await dropped(), `DROP counters of ${probe.chain}`).toBeGreaterThan(droppedBefore);
  });

  // ---- What a person reads --------------------------------------------------------------------------------
  it('kubectl get shows readable printer columns, and Events explain what the operator did', () =>
    journey('columns', async () => {
      const table = await k.kubectl(['-n', ns, 'get', 'translationservices', '-o', 'wide']);
      const [header, row] = table.trim().split('\n');
      expect(header?.split(/\s{2,}/)).toEqual([
        'NAME',
        'IMAGE',
        'REPLICAS',
        'AVAILABLE',
        'READY',
        'REASON',
        'URL',
        'AGE',
      ]);
      expect(row).toMatch(/^translation\s+\S+\s+2\s+2\s+True\s+\S+\s+http:\/\/\S+/);
      const lcTable = await k.kubectl(['-n', ns, 'get', 'ledgerclusters']);
      if (ledgerReconciler) {
        expect(
          lcTable
            .trim()
            .split('\n')[0]
            ?.split(/\s{2,}/),
        ).toEqual(['NAME', 'VALIDATORS', 'ACTIVE', 'HEIGHT', 'READY', 'AGE']);
        expect(lcTable).toMatch(/\nledger\s+4\s+4\s+\d+\s+True\s/);
      }
      interface Event {
        type: string;
        reason: string;
        note?: string;
        message?: string;
        involvedObject: { kind: string; name: string };
      }
      const events = (await k.getJson<KubeList<Event>>(['-n', ns, 'events'])).items;
      const about = (kind: string) => events.filter((e) => e.involvedObject.kind === kind);
      const ts = about('TranslationService');
      expect(ts.length, 'Events about the TranslationService').toBeGreaterThan(0);
      for (const e of [...ts, ...about('LedgerCluster')]) {
        expect(e.reason).toMatch(/^[A-Z][A-Za-z]+$/);
        expect(['Normal', 'Warning']).toContain(e.type);
        expect((e.message ?? '').length).toBeGreaterThan(0);
      }
      // The operator reports what it made (reason Created, a Normal event naming the objects); the translation
      // journey had nothing go wrong, so no Warning about it (the ledger's may warn about the validator killed above).
      const reasons = (kind: string) => about(kind).map((e) => `${e.type}/${e.reason}`);
      log(
        `event reasons: TranslationService ${reasons('TranslationService')}; LedgerCluster ${reasons('LedgerCluster')}`,
      );
      expect(reasons('TranslationService')).toContain('Normal/Created');
      expect(reasons('TranslationService').filter((r) => r.startsWith('Warning/'))).toEqual([]);
      if (ledgerReconciler) {
        expect(reasons('LedgerCluster')).toContain('Normal/Created');
      }
      const printed = await k.kubectl([
        '-n',
        ns,
        'get',
        'events',
        '--field-selector',
        'involvedObject.kind=TranslationService',
      ]);
      expect(printed.split('\n')[0]).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
      expect(printed).toContain('translationservice/translation');
      // The worker CronJob's own schedule (every minute in the sample) fires too: a Job the controller named
      // <cronjob>-<scheduled minute> succeeds (the e2e-* Jobs above were created by hand).
      await waitFor(
        'a scheduled run of the worker CronJob to succeed',
        async () => {
          const jobs = await k.getJson<KubeList<KubeObject & { status: { succeeded?: number } }>>(['-n', ns, 'jobs']);
          return jobs.items.find((j) => /^translation-worker-\d+$/.test(j.metadata.name) && j.status.succeeded === 1);
        },
        { timeoutMs: 180_000, intervalMs: 5000 },
      );
    }));

  it('deleting everything leaves nothing behind (the CRDs stay, as Helm keeps them by design)', async () => {
    await k.kubectl(
      ['-n', ns, 'delete', 'translationservices,ledgerclusters', '--all', '--wait=true', '--timeout=180s'],
      {
        timeoutMs: 200_000,
      },
    );
    await waitFor(
      "the operator's objects garbage-collected",
      async () => {
        const left = await k.kubectl([
          '-n',
          ns,
          'get',
          'deployments,statefulsets,cronjobs,jobs,services,secrets,configmaps',
          '-l',
          'app.kubernetes.io/managed-by=scriptorium-operator',
          '-o',
          'name',
        ]);
        return left.trim() === '' ? true : undefined;
      },
      wait,
    );
    await k.helm(['uninstall', release, '-n', ns, '--wait', '--timeout', '180s']);
    await k.kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=240s'], { timeoutMs: 260_000 });
    const gone = async (args: string[]) => {
      const out = await k.kubectl(['get', ...args, '--ignore-not-found', '-o', 'name']);
      expect(out.trim(), `left behind: ${out}`).toBe('');
    };
    await gone(['namespace', ns]);
    await gone(['clusterrole', operatorName]);
    await gone(['clusterrolebinding', operatorName]);
    expect(await k.helm(['list', '-A', '-q', '--filter', `^${release}$`])).toBe('');
    // Volumes: a dynamically provisioned one (kind's `standard`, reclaim Delete) goes with its claim; one of
    // the local cluster's pool (reclaim Retain) stays Released until cluster-up recycles it. None stays Bound.
    await waitFor(
      'no PersistentVolume left bound to the namespace, none of reclaim policy Delete left at all',
      async () => {
        const pvs = await k.getJson<
          KubeList<
            KubeObject & {
              spec: { claimRef?: { namespace?: string }; persistentVolumeReclaimPolicy?: string };
              status: { phase?: string };
            }
          >
        >(['pv']);
        const ours = pvs.items.filter((pv) => pv.spec.claimRef?.namespace === ns);
        const left = ours.filter(
          (pv) => pv.status.phase !== 'Released' || pv.spec.persistentVolumeReclaimPolicy !== 'Retain',
        );
        return left.length === 0 ? true : undefined;
      },
      { timeoutMs: 120_000 },
    );
  }, 900_000);
});
