// The ledger's journey of the end-to-end suite, on a real cluster given by KUBECONFIG (make e2e-local: the local
// cluster of tools/cluster; make e2e-kind: kind): the operator chart and the sample 4-validator LedgerCluster, the
// kubectl plugin's status, the genesis refused a change, agreement, a validator killed and caught up, scaling
// 4 → 5 → 4, the integrity watch of two brokers outside the cluster, /ui and a proof through the ingress controller,
// what a person reads, and nothing left behind. Its own namespace and operator release (journey.ts); the steps in
// order, each needing the ones before it. The translation journey (translation-service.test.ts) and the other files
// run beside it.
import { seed, startTestBroker, type TestBroker } from '@scriptorium/harness/test-broker';
import { Block, blockHash, verifyLightEvidence } from '@scriptorium/ledger-protocol';
import { hasChromium, launchBrowser } from '@scriptorium/test-support/browser';
import { describe, expect, it } from 'vitest';
import { SUITE_RESOURCES } from './config.ts';
import { kubectlPlugin } from './install.ts';
import {
  eventsAbout,
  itDeletesEverything,
  itInstallsTheOperator,
  manifest,
  printerColumns,
  startJourney,
} from './journey.ts';
import { condition, type KubeList, type KubeObject, viaIngress, waitFor } from './kube.ts';
import { type ChainStatus, ledgerPods, podReady } from './ledger.ts';

const j = startJourney('ledger', { objects: 'ledgerclusters', describe: ['ledgercluster/ledger'] });
const { config, k, ns, operatorName, wait, log } = j;
const journey = j.part('the journey');
/** Where the watch step found its TAMPERED record (the ingress step verifies its proof). */
let tamperedAt: { height: number; index: number } | undefined;
/** A merge patch of the LedgerCluster `ledger`'s spec (kubectl patch --type=merge). */
const patchLedger = (spec: Record<string, unknown>) =>
  k.kubectl(['-n', ns, 'patch', 'ledgercluster', 'ledger', '--type=merge', '-p', JSON.stringify({ spec })]);

describe('a LedgerCluster on a real cluster', () => {
  itInstallsTheOperator(j, journey);

  // ---- LedgerCluster ------------------------------------------------------------------------------------
  // Runs when the installed operator reconciles LedgerClusters: its ClusterRole (read at run time) grants the
  // StatefulSets a LedgerCluster is made of. Until the reconciler lands, these steps are skipped, not faked.
  const ledger = j.part('the LedgerCluster');
  /**
   * Brokers outside the cluster, as a city's usually are: the harness's test broker, run by this process on this host
   * at the address the pods reach it by (E2E_HOST_ADDRESS), never an image: primary and federated, seeded alike (50
   * entities × 3 attributes). Started once, at the first apply, and serving until afterAll: the validators watch them
   * from their creation on (through the kill and the scaling below), so no step rolls the validators to add them.
   */
  let brokersStarted: Promise<[TestBroker, TestBroker]> | undefined;
  const watchedBrokers = () => {
    brokersStarted ??= (async () => {
      const started: TestBroker[] = [];
      for (let i = 0; i < 2; i++) {
        const broker = await startTestBroker({ host: config.hostAddress, port: 0 });
        seed(broker, { count: 50, attrs: 3 });
        started.push(broker);
        j.closeAtEnd(() => broker.close());
      }
      return started as [TestBroker, TestBroker];
    })();
    return brokersStarted;
  };
  /**
   * The sample LedgerCluster with this run's image, the two brokers above, and an idle chain that makes an empty block
   * every E2E_EMPTY_BLOCK_INTERVAL_MS instead of every minute: the steps that wait for blocks (height ≥ 2, a killed
   * validator catching up, membership changes) see them within seconds. The same manifest at every apply: a
   * different interval or broker would roll the validators.
   */
  const ledgerSample = async () => {
    const sample = manifest('deploy/samples/ledger-cluster.yaml').replaceAll(
      'scriptorium/ledger-node:dev',
      config.ledgerImage,
    );
    const idle = /^(\s*emptyBlockIntervalMs:) \d+/m;
    if (!idle.test(sample))
      throw new Error('deploy/samples/ledger-cluster.yaml sets no consensus.emptyBlockIntervalMs');
    const validators = /^( {2}validators: \d+\n)/m;
    if (!validators.test(sample)) throw new Error('deploy/samples/ledger-cluster.yaml sets no spec.validators');
    const [primary, federated] = await watchedBrokers();
    // JSON is YAML's flow style: the brokers go in as one line of the spec.
    const brokers = {
      primary: { name: 'primary', url: primary.url },
      federated: [{ name: 'federated', url: federated.url }],
      pollIntervalSeconds: 5,
    };
    return sample
      .replace(idle, `$1 ${config.emptyBlockIntervalMs}`)
      .replace(
        validators,
        `$1  brokers: ${JSON.stringify(brokers)}\n  resources: ${JSON.stringify(SUITE_RESOURCES)}\n`,
      );
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
        const sample = await ledgerSample();
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

  it('kubectl scriptorium (make kubectl-plugin): status prints the LedgerCluster', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await ledger('plugin', () =>
      journey('plugin', async () => {
        const plugin = await kubectlPlugin(config);
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
      }),
    );
  });

  it('the API server refuses a change of the genesis with a readable message (CEL in the CRD)', () =>
    journey('genesis', async () => {
      // Applied again (a no-op when the step above ran): the refusal needs no reconciler.
      const sample = await ledgerSample();
      await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: sample });
      const refusal = await patchLedger({ genesis: { chainId: 'other' } }).then(
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
      // The brokers were given at the LedgerCluster's creation (ledgerSample): every validator, the ones killed and
      // added since too, carries their settings.
      const [, federated] = await watchedBrokers();
      const pods = await validatorPods();
      const unset = pods.filter(
        (p) => !(p.spec.containers[0]?.env ?? []).some((e) => e.name === 'NODE_BROKER__PRIMARY_URL'),
      );
      expect(pods.length).toBe(4);
      expect(
        unset.map((p) => p.metadata.name),
        'validators without the broker settings',
      ).toEqual([]);
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
      await patchLedger({ ingress: { host, className: config.ingress.className } });
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

  // ---- What a person reads --------------------------------------------------------------------------------
  it('kubectl get shows readable printer columns, and Events explain what the operator did', async (ctx) => {
    if (!(await ledgerAvailable())) ctx.skip();
    await journey('columns', async () => {
      // READY is the Ready condition: False for as long as a validator's readiness probe fails, which on a loaded
      // node happens for seconds at a time (a CI run read False once, and True again by its failure report).
      let last = '';
      const { columns } = await waitFor(
        'the LedgerCluster row to read 4 validators, 4 active, a height, Ready True',
        async () => {
          const table = await printerColumns(j, 'ledgerclusters');
          last = table.rows[0] ?? '';
          return /^ledger\s+4\s+4\s+\d+\s+True\s/.test(last) ? table : undefined;
        },
        { ...wait, describe: () => last },
      );
      expect(columns).toEqual(['NAME', 'VALIDATORS', 'ACTIVE', 'HEIGHT', 'READY', 'AGE']);
      // The operator reports what it made (reason Created); it may warn about the validator killed above.
      const reasons = await eventsAbout(j, 'LedgerCluster');
      log(`event reasons: ${reasons}`);
      expect(reasons).toContain('Normal/Created');
    });
  });

  itDeletesEverything(j, 'ledgerclusters');
});
