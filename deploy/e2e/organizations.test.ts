// Two organizations, one chain, on a real cluster (make e2e-local, make e2e-kind: the suite's cluster, given by
// KUBECONFIG): organization A runs a LedgerCluster in its namespace, organization B joins A's chain from A's genesis
// in a namespace of its own, each with its own operator (a Helm release watching only its namespace) and its own CA,
// trusting the other's; each scales 2 → 3 → 2, and the chain keeps finalizing while B's operator is stopped. A file
// of its own so that it runs beside the suite's journey (it shares nothing with it); afterAll removes both releases
// and namespaces even when the step failed.
import { randomBytes } from 'node:crypto';
import { Block, blockHash } from '@scriptorium/ledger-protocol';
import { createClusterCa } from '@scriptorium/operator/ledger';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, SUITE_RESOURCES } from './config.ts';
import { applyCrds, createNamespace, installOperator, refuseClusterWideOperator } from './install.ts';
import { condition, type KubeObject, kube, waitFor } from './kube.ts';
import { ledgerPods, podReady } from './ledger.ts';

const config = loadConfig();
const k = kube(config);
/** Organization A's namespace and Helm release; B's is the same name with `-b`. */
const ns = `${config.namePrefix}-orgs-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const nsB = `${ns}-b`;
const operatorNameB = `${nsB}-scriptorium-operator`;
const wait = { timeoutMs: config.waitMs };
const { validatorPods, chains, expectAgreement, ledgerGet } = ledgerPods(k, config, ns);
const log = (line: string) => process.stderr.write(`e2e orgs [${ns}]: ${line}\n`);
let failed = false;

beforeAll(async () => {
  log(`namespaces and Helm releases ${ns}, ${nsB}`);
  await refuseClusterWideOperator(k);
  await applyCrds(k);
  for (const namespace of [ns, nsB]) {
    await createNamespace(k, namespace);
    await installOperator(k, config, namespace);
  }
}, 900_000);

afterEach(async (ctx) => {
  // What the cluster looked like at the first failure (before the clean-up removes it).
  if (ctx.task.result?.state !== 'fail' || failed) return;
  failed = true;
  for (const namespace of [ns, nsB]) {
    const out = await k
      .kubectl(['-n', namespace, 'get', 'ledgerclusters,pods,events', '-o', 'wide'])
      .catch((err: Error) => err.message);
    process.stderr.write(`--- ${namespace}\n${out.split('\n').slice(-80).join('\n')}\n`);
  }
  // Each validator's own account: its readiness with what its pull sync is doing (a 503's body is in the error),
  // and the end of its log.
  for (const [namespace, cluster] of [
    [ns, 'org-a'],
    [nsB, 'org-b'],
  ] as const) {
    for (const pod of await validatorPods(namespace, cluster).catch(() => [])) {
      const ready = await ledgerGet(pod, '/ready').then(
        (body) => JSON.stringify(body),
        (err: Error) => err.message,
      );
      const logs = await k
        .kubectl(['-n', namespace, 'logs', pod.metadata.name, '--tail=30'])
        .catch((err: Error) => err.message);
      process.stderr.write(`--- ${pod.metadata.name} /ready: ${ready}\n${logs}\n`);
    }
  }
});

afterAll(async () => {
  for (const namespace of [nsB, ns]) {
    await k
      .helm(['uninstall', namespace, '-n', namespace, '--ignore-not-found', '--wait', '--timeout', '180s'])
      .catch((err: Error) => log(`helm uninstall ${namespace}: ${err.message}`));
    await k
      .kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--wait=true', '--timeout=240s'])
      .catch((err: Error) => log(`delete namespace ${namespace}: ${err.message}`));
  }
}, 900_000);

describe('two organizations, one chain', () => {
  it("B joins A's chain from its genesis across two CAs; each scales 2 → 3 → 2, and B's operator stopped", async () => {
    // Each organization has its own CA; each trusts the other's (a bundle of the other's certificate).
    const now = new Date();
    const cas = {
      [ns]: await createClusterCa({ commonName: 'organization A ledger CA', now }),
      [nsB]: await createClusterCa({ commonName: 'organization B ledger CA', now }),
    };
    for (const [namespace, other] of [
      [ns, nsB],
      [nsB, ns],
    ] as const) {
      const mine = cas[namespace] as { certPem: string; keyPem: string };
      const theirs = cas[other] as { certPem: string };
      await k.kubectl(['-n', namespace, 'apply', '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'org-ca' },
              type: 'kubernetes.io/tls',
              stringData: { 'tls.crt': mine.certPem, 'tls.key': mine.keyPem },
            },
            {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'other-org-ca' },
              stringData: { 'ca.crt': theirs.certPem },
            },
          ],
        }),
      });
    }
    const tls = {
      mode: 'mutual',
      caSecretRef: { name: 'org-ca' },
      trustedCaSecretRef: { name: 'other-org-ca', key: 'ca.crt' },
    };
    const consensus = { emptyBlockIntervalMs: config.emptyBlockIntervalMs };
    // Small requests (SUITE_RESOURCES): up to six more validators beside the other journeys' pods on a 2-core node.
    const resources = SUITE_RESOURCES;
    const apply = (namespace: string, obj: object) =>
      k.kubectl(['-n', namespace, 'apply', '-f', '-'], { input: JSON.stringify(obj) });
    await apply(ns, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'org-a' },
      spec: {
        image: config.ledgerImage,
        validators: 2,
        resources,
        genesis: { chainId: `${ns}.two-orgs` },
        consensus,
        tls,
      },
    });
    const lcReady = (namespace: string, name: string, active: number) =>
      waitFor(
        `${namespace}/${name} Ready with ${active} active validators`,
        async () => {
          const lc = await k.getJson(['-n', namespace, 'ledgercluster', name]);
          return condition(lc, 'Ready')?.status === 'True' &&
            lc.status?.activeValidators === active &&
            !lc.status?.pendingChange
            ? lc
            : undefined;
        },
        { ...wait, intervalMs: 3000 },
      );
    await lcReady(ns, 'org-a', 2);
    // What A publishes to B: its genesis ConfigMap (B pins its hash), its validators' addresses, the chain's token.
    const genesisCm = await k.getJson<KubeObject & { data: Record<string, string> }>([
      '-n',
      ns,
      'configmap',
      'org-a-genesis',
    ]);
    const genesisHash = blockHash(Block.parse(JSON.parse(genesisCm.data['genesis.json'] ?? '')).header);
    const keyOf = async (namespace: string, validator: string) =>
      (
        await k.getJson<KubeObject & { metadata: { annotations?: Record<string, string> } }>([
          '-n',
          namespace,
          'secret',
          `${validator}-key`,
        ])
      ).metadata.annotations?.['scriptorium.dev/public-key'] ?? '';
    const token = Buffer.from(
      (await k.getJson<{ data: { token: string } }>(['-n', ns, 'secret', 'org-a-token'])).data.token,
      'base64',
    ).toString('utf8');
    await k.kubectl(['-n', nsB, 'create', 'secret', 'generic', 'chain-token', `--from-literal=token=${token}`]);
    await apply(nsB, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'org-b' },
      spec: {
        image: config.ledgerImage,
        validators: 2,
        resources,
        genesis: { from: { configMapRef: { namespace: ns, name: 'org-a-genesis' }, hash: genesisHash } },
        clusterTokenSecretRef: { name: 'chain-token', key: 'token' },
        externalValidators: await Promise.all(
          ['org-a-v0', 'org-a-v1'].map(async (v) => ({
            publicKey: await keyOf(ns, v),
            address: `${v}.${ns}.svc:8000`,
            organization: 'A',
          })),
        ),
        consensus,
        tls,
      },
    });
    await lcReady(nsB, 'org-b', 4);
    await lcReady(ns, 'org-a', 4);
    // The validators of both organizations once the scaling has settled: `active` pods Ready, none terminating (a
    // pod scaled away ends with phase Succeeded and can no longer be exec'd into for its CA).
    const allPods = async (active = 4) => {
      let seen = '';
      return waitFor(
        `${active} validator pods of both organizations Ready, none terminating`,
        async () => {
          const pods = [...(await validatorPods(ns, 'org-a')), ...(await validatorPods(nsB, 'org-b'))];
          seen = pods
            .map((p) => `${p.metadata.name}=${p.status.phase}${p.metadata.deletionTimestamp ? '(terminating)' : ''}`)
            .join(', ');
          return pods.length === active && pods.every(podReady) ? pods : undefined;
        },
        { ...wait, describe: () => seen },
      );
    };
    await expectAgreement(await allPods());
    // Either organization scales its own validators while the other keeps running.
    const scale = async (namespace: string, name: string, n: number, active: number) => {
      await k.kubectl(['-n', namespace, 'scale', `ledgercluster/${name}`, `--replicas=${n}`]);
      await lcReady(namespace, name, active);
    };
    for (const [namespace, name] of [
      [nsB, 'org-b'],
      [ns, 'org-a'],
    ] as const) {
      await scale(namespace, name, 3, 5);
      await scale(namespace, name, 2, 4);
      await expectAgreement(await allPods());
    }
    // B's operator stopped: A scales, and the chain (with B's validators in it) keeps finalizing.
    const heightBefore = Math.max(...(await chains(await validatorPods(nsB, 'org-b'))).map((s) => s.height));
    await k.kubectl(['-n', nsB, 'scale', `deployment/${operatorNameB}`, '--replicas=0']);
    await scale(ns, 'org-a', 3, 5);
    await scale(ns, 'org-a', 2, 4);
    const heightAfter = Math.max(...(await chains(await validatorPods(nsB, 'org-b'))).map((s) => s.height));
    expect(heightAfter).toBeGreaterThan(heightBefore);
    await k.kubectl(['-n', nsB, 'scale', `deployment/${operatorNameB}`, '--replicas=1']);
    await lcReady(nsB, 'org-b', 4);
    await expectAgreement(await allPods());
    // Both organizations' clusters go (afterAll then removes the releases and the namespaces).
    await k.kubectl(['-n', nsB, 'delete', 'ledgercluster', 'org-b', '--wait=true', '--timeout=180s']);
    await k.kubectl(['-n', ns, 'delete', 'ledgercluster', 'org-a', '--wait=true', '--timeout=180s']);
  }, 900_000);
});
