// The translation journey of the end-to-end suite, on a real cluster given by KUBECONFIG (make e2e-local: the local
// cluster of tools/cluster; make e2e-kind: kind): the operator chart, PostgreSQL and the sample TranslationService,
// a translation with a key from the image's CLI, a sign-in through the ingress controller, the CronJobs' Jobs, the
// kubectl plugin's keys, what a person reads, and nothing left behind; on the local cluster, the egress firewall
// seen from a pod. Its own namespace and operator release (journey.ts); the steps in order, each needing the ones
// before it. The ledger's journey (ledger-cluster.test.ts) and the other files run beside it.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { keysCreateArgs } from '@scriptorium/operator';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './config.ts';
import { kubectlPlugin } from './install.ts';
import {
  eventsAbout,
  itDeletesEverything,
  itInstallsTheOperator,
  printerColumns,
  startJourney,
  withSuiteCpu,
} from './journey.ts';
import {
  condition,
  http,
  type KubeList,
  type KubeObject,
  portForward,
  rolloutStatus,
  viaIngress,
  waitFor,
} from './kube.ts';
import { type Pod, podReady } from './ledger.ts';

const execFileAsync = promisify(execFile);
const j = startJourney('translation', {
  objects: 'translationservices,jobs,cronjobs',
  describe: ['deployment/translation'],
});
const { config, k, ns, wait, log } = j;
const journey = j.part('the journey');

describe('a TranslationService on a real cluster', () => {
  itInstallsTheOperator(j, journey);

  it('runs PostgreSQL and the sample TranslationService to Ready, after its migration Job completed', () =>
    journey('translation', async () => {
      const postgres = withSuiteCpu('deploy/postgres.yaml').replaceAll(
        'docker.io/library/postgres:17-alpine',
        config.postgresImage,
      );
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: postgres });
      await rolloutStatus(k, ns, 'statefulset/postgres', config.waitMs);
      const sample = withSuiteCpu('deploy/samples/translation-service.yaml')
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
      j.closeAtEnd(() => forward.close());
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
      await rolloutStatus(k, ns, 'deployment/github-oauth', config.waitMs);

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
      await rolloutStatus(k, ns, 'deployment/translation', config.waitMs);
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
      // Each Job is made from its CronJob's template, as `kubectl create job --from=cronjob/…` makes it, owned by the
      // CronJob (deleted with it) but not controlled by it: the CronJob's history keeps one finished Job of those it
      // controls, and the worker's runs every minute, so a scheduled run finishing after a hand-made one would delete
      // the hand-made one (a CI run polled NotFound for 300 s after that).
      for (const which of ['worker', 'retention']) {
        const cronJob = await k.getJson<KubeObject & { spec: { jobTemplate: { metadata?: object; spec: object } } }>([
          '-n',
          ns,
          'cronjob',
          `translation-${which}`,
        ]);
        const job = {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: {
            ...cronJob.spec.jobTemplate.metadata,
            name: `e2e-${which}`,
            annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
            ownerReferences: [
              { apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob.metadata.name, uid: cronJob.metadata.uid },
            ],
          },
          spec: cronJob.spec.jobTemplate.spec,
        };
        await k.kubectl(['-n', ns, 'create', '-f', '-'], { input: JSON.stringify(job) });
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

  it('kubectl scriptorium (make kubectl-plugin): keys create makes an API key', () =>
    journey('plugin', async () => {
      const plugin = await kubectlPlugin(config);
      const issued = JSON.parse(
        await plugin(['keys', 'create', 'translation', '-n', ns, '--user', 'e2e-plugin@example.com']),
      ) as { apiKey: string };
      expect(issued.apiKey).toMatch(/^sk_live_/);
    }));

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
      // READY follows the API pods' readiness, which a loaded node can fail for seconds (as the LedgerCluster's).
      let last = '';
      const { columns } = await waitFor(
        'the TranslationService row to read 2 replicas, 2 available, Ready True and its URL',
        async () => {
          const table = await printerColumns(j, 'translationservices', true);
          last = table.rows[0] ?? '';
          return /^translation\s+\S+\s+2\s+2\s+True\s+\S+\s+http:\/\/\S+/.test(last) ? table : undefined;
        },
        { ...wait, describe: () => last },
      );
      expect(columns).toEqual(['NAME', 'IMAGE', 'REPLICAS', 'AVAILABLE', 'READY', 'REASON', 'URL', 'AGE']);
      // The operator reports what it made (reason Created, a Normal event naming the objects); the journey had
      // nothing go wrong, so no Warning.
      const reasons = await eventsAbout(j, 'TranslationService');
      log(`event reasons: ${reasons}`);
      expect(reasons).toContain('Normal/Created');
      expect(reasons.filter((r) => r.startsWith('Warning/'))).toEqual([]);
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

  itDeletesEverything(j, 'translationservices');
});
