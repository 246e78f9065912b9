import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LocalCluster } from '@scriptorium/harness/local-cluster';
import { type HostileNode, startHostileNode } from '@scriptorium/harness/test-receivers';
import type { TestControlPlane } from '@scriptorium/kube-testenv';
import { type Block, blockHash } from '@scriptorium/ledger-protocol';
import { generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import vectors from '@scriptorium/ledger-protocol/test-vectors' with { type: 'json' };
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { Operator } from '../src/operator.ts';
import { condition, create, createNamespace, eventually, get, startTestbed, type Testbed } from './helpers.ts';

// `kubectl scriptorium`, run as a process the way kubectl runs a plugin, against a real control plane (status,
// retire), real ledger nodes on loopback and a node that serves every forged evidence of the shared vectors
// (verify-proof).
const PLUGIN = join(import.meta.dirname, '../src/plugin/main.ts');
const run = promisify(execFile);

async function plugin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [PLUGIN, ...args], { timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

let bed: Testbed;
let plane: TestControlPlane;
let client: KubeClient;
let operator: Operator;
let ns: string;

beforeAll(async () => {
  bed = await startTestbed();
  ({ plane, client } = bed);
  operator = await bed.startOperator({ identity: 'kubectl-plugin' });
  ns = await createNamespace(client, 'plugin');
});

afterAll(async () => {
  await bed?.stop();
});

describe('kubectl scriptorium on a real control plane', { timeout: 240_000 }, () => {
  const kube = () => ['--kubeconfig', plane.kubeconfigPath, '-n', ns];

  it('status prints the LedgerCluster the operator reconciled: members, roles, quorum, conditions', async () => {
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'ledger', namespace: ns },
      spec: { image: 'scriptorium/ledger-node:test', validators: 4, tls: { mode: 'disabled' } },
    });
    await eventually('4 validator pods', async () => {
      const pods = await client.request<{ items: unknown[] }>('GET', resourcePath(RESOURCES.Pod, ns), {
        query: { labelSelector: 'scriptorium.dev/ledger-cluster=ledger' },
      });
      return pods.items.length === 4;
    });
    await eventually('status with 4 members', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      return got?.status?.members?.length === 4 && condition(got, 'Progressing') ? got : undefined;
    });
    const { code, stdout, stderr } = await plugin(['status', 'ledger', ...kube()]);
    expect(code, stderr).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^LedgerCluster ${ns}/ledger +Ready=False \\(ValidatorsStarting\\) +age \\d+s$`),
    );
    expect(lines[1]).toBe(
      'validators 4 desired, 0 ready · active ? · quorum ? · height ? · round ? · ? records waiting',
    );
    expect(stdout).toContain('pending change: none');
    expect(stdout).toMatch(/^MEMBER +ROLE +HEIGHT +POD$/m);
    for (const v of ['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3']) {
      expect(stdout).toMatch(new RegExp(`^${v} +validator +\\? +Pending$`, 'm'));
    }
    expect(stdout).toMatch(/^Progressing +True +ValidatorsStarting +\d+s +0\/4 validators ready/m);
    expect(stdout).toMatch(/^Degraded +False +AsExpected/m);

    const missing = await plugin(['status', 'nope', ...kube()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`LedgerCluster ${ns}/nope not found`);
  });

  it('retire refuses a non-member, edits spec.retire guarded by resourceVersion, and follows until it is done', async () => {
    const refused = await plugin(['retire', 'ledger', 'ledger-v9', ...kube()]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ledger-v9 is not a member of ledger');
    expect((await get(client, RESOURCES.LedgerCluster, ns, 'ledger'))?.spec.retire).toEqual([]);

    // From here the test plays the operator's part (it stops, so its status writes do not race the test's).
    await operator.stop();
    const following = plugin(['retire', 'ledger', 'ledger-v1', '--timeout', '90s', ...kube()]);
    const lc = await eventually('spec.retire lists ledger-v1', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      return got?.spec.retire?.includes('ledger-v1') ? got : undefined;
    });
    const writeStatus = async (status: object) => {
      const fresh = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      await client.request('PUT', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger', 'status'), {
        body: { ...fresh, status: { ...fresh?.status, ...status } },
      });
    };
    const progressing = (reason: string, message: string) => [
      {
        type: 'Progressing',
        status: 'True',
        reason,
        message,
        lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      },
    ];
    await writeStatus({
      conditions: progressing(
        'MembershipChange',
        'REMOVE ledger-v1 submitted through ledger-v0; waiting until it is final',
      ),
      pendingChange: { kind: 'REMOVE', validator: 'ledger-v1', via: 'ledger-v0' },
    });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const members = (lc.status.members as Array<{ name: string }>).filter((m) => m.name !== 'ledger-v1');
    await writeStatus({
      conditions: progressing('ValidatorsStarting', '0/4 validators ready'),
      pendingChange: undefined,
      members,
      observedGeneration: lc.metadata.generation,
    });
    const { code, stdout, stderr } = await following;
    expect(code, stderr).toBe(0);
    const out = stdout.split('\n');
    expect(out[0]).toBe(`spec.retire of ${ns}/ledger now lists ledger-v1`);
    expect(stdout).toMatch(
      /^\[\d+s\] MembershipChange: REMOVE ledger-v1 submitted through ledger-v0; waiting until it is final \(pending REMOVE ledger-v1\)$/m,
    );
    expect(stdout).toMatch(/^\[\d+s\] ledger-v1 retired: no longer a member/m);

    const again = await plugin(['retire', 'ledger', 'ledger-v1', '--no-wait', ...kube()]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('ledger-v1 is already in spec.retire');
    expect((await get(client, RESOURCES.LedgerCluster, ns, 'ledger'))?.spec.retire).toEqual(['ledger-v1']);
  });
});

describe('kubectl scriptorium verify-proof against real ledger nodes', { timeout: 240_000 }, () => {
  let cluster: LocalCluster;
  afterAll(async () => {
    await cluster?.stopAll();
  });

  it('verifies a record from its light evidence, the genesis pinned from a file or the cluster; refuses another genesis', async () => {
    cluster = await LocalCluster.create({
      size: 4,
      debugApi: true,
      roundTimeoutMs: 1000,
      chainId: 'plugin-test',
    });
    await cluster.startAll();
    for (const node of cluster.nodes) await cluster.waitHealthy(node);
    const node = cluster.nodes[0];
    if (!node) throw new Error('no node');
    // An ADD and a REMOVE of an extra key (its node never runs): the evidence carries both membership blocks.
    const extra = generateKeyPair().publicKey;
    for (const [action, size] of [
      ['ADD', 5],
      ['REMOVE', 4],
    ] as const) {
      expect((await cluster.post(node, '/admin/validator', { action, validator: extra })).status).toBe(200);
      await eventually(`${size} validators`, async () => {
        const chain = (await cluster.get(node, '/chain')).body as { validators: number };
        return chain.validators === size ? true : undefined;
      });
    }
    const submitted = await cluster.post(node, '/admin/submit?count=3', {});
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const height = await eventually('a block with records', async () => {
      const top = await cluster.height(node);
      for (let h = 1; h <= top; h++) {
        const block = (await cluster.get(node, `/blocks/${h}`)).body as { records: unknown[] };
        if (block.records.length > 0) return h;
      }
      return undefined;
    });
    const genesisText = readFileSync(cluster.genesisFile, 'utf8');
    const genesisHash = blockHash((JSON.parse(genesisText) as Block).header);

    const ok = await plugin(['verify-proof', node.url, String(height), '0', '--genesis', cluster.genesisFile]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`pinned genesis: chain plugin-test, hash ${genesisHash}`);
    expect(ok.stdout).toMatch(new RegExp(`record 0 of block ${height}: \\d+ proof steps?`));
    expect(ok.stdout.match(/^membership block \d+: (ADD|REMOVE) /gm)).toHaveLength(2);
    expect(ok.stdout).toMatch(new RegExp(`block ${height} \\(hash [0-9a-f]{12}…\\): final by \\d valid seals`));
    expect(ok.stdout.trim().endsWith('VALID')).toBe(true);

    // Pinned from the cluster: the genesis ConfigMap of the LedgerCluster named with --cluster.
    const pinNs = await createNamespace(client, 'pin');
    await create(client, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'local-genesis', namespace: pinNs },
      data: { 'genesis.json': genesisText },
    });
    const pinned = await plugin([
      'verify-proof',
      node.url,
      String(height),
      '0',
      '--cluster',
      'local',
      '--kubeconfig',
      plane.kubeconfigPath,
      '-n',
      pinNs,
    ]);
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stdout).toContain(`hash ${genesisHash}`);
    // The namespace's only LedgerCluster ('ledger', which the operator gave its own genesis): the node's block 0 is
    // not that cluster's, so nothing it serves is believed.
    const other = await plugin([
      'verify-proof',
      node.url,
      String(height),
      '0',
      '--kubeconfig',
      plane.kubeconfigPath,
      '-n',
      ns,
    ]);
    expect(other.code).toBe(1);
    expect(other.stdout).toMatch(
      /INVALID: the node serves a block 0 that hashes to [0-9a-f]{64}, not the pinned genesis/,
    );
    const none = await plugin([
      'verify-proof',
      node.url,
      String(height),
      '0',
      '--kubeconfig',
      plane.kubeconfigPath,
      '-n',
      pinNs,
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`no LedgerCluster in namespace ${pinNs}`);

    const missing = await plugin(['verify-proof', node.url, String(height), '999', '--genesis', cluster.genesisFile]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('HTTP 404');
    const usage = await plugin(['verify-proof', node.url, 'x', '0']);
    expect(usage.code).toBe(2);
  });
});

describe('kubectl scriptorium verify-proof against a node that lies', { timeout: 240_000 }, () => {
  let hostile: HostileNode;
  const dir = mkdtempSync(join(tmpdir(), 'plugin-vectors-'));
  const genesisFile = join(dir, 'genesis.json');
  beforeAll(async () => {
    writeFileSync(genesisFile, JSON.stringify(vectors.chain[0]));
    hostile = await startHostileNode({ genesis: vectors.chain[0] as Block });
  });
  afterAll(async () => {
    await hostile?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(vectors.light.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
    hostile.serve(v);
    const res = await plugin([
      'verify-proof',
      hostile.url,
      String(v.height),
      String(v.index),
      '--genesis',
      genesisFile,
    ]);
    expect(res.code, `${res.stdout}${res.stderr}`).toBe(v.valid ? 0 : 1);
    if (v.valid) expect(res.stdout.trim().endsWith('VALID')).toBe(true);
    else expect(res.stdout.split('\n').find((l) => l.startsWith('INVALID: '))).toContain(v.refusal);
  });

  const policyFlags = vectors.witness_policy.witnesses.flatMap((w) => ['--witness', `${w.name}=${w.key}`]);
  it.each(vectors.witnessed.map((v) => [v.name, v] as const))('with --witness flags: %s', async (_name, v) => {
    hostile.serve(v);
    const res = await plugin([
      'verify-proof',
      hostile.url,
      String(v.height),
      String(v.index),
      '--genesis',
      genesisFile,
      ...policyFlags,
      '--witness-threshold',
      '2',
    ]);
    expect(res.code, `${res.stdout}${res.stderr}`).toBe(v.valid ? 0 : 1);
    if (v.valid) expect(res.stdout).toMatch(/2 of 2 trusted witnesses[\s\S]*VALID$/m);
    else expect(res.stdout.split('\n').find((l) => l.startsWith('INVALID: '))).toContain(v.refusal);
  });

  it("with the LedgerCluster's witness policy: its spec.witnesses and witnessPolicy.threshold", async () => {
    const pinNs = await createNamespace(client, 'witness-pin');
    await create(client, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'vectors-genesis', namespace: pinNs },
      data: { 'genesis.json': `${JSON.stringify(vectors.chain[0], null, 2)}\n` },
    });
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'vectors', namespace: pinNs },
      spec: {
        image: 'scriptorium/ledger-node:test',
        validators: 1,
        tls: { mode: 'disabled' },
        witnesses: vectors.witness_policy.witnesses.map((w) => ({ ...w, url: `https://${w.name}.example` })),
        witnessPolicy: { threshold: 2 },
      },
    });
    const byName = (name: string) => vectors.witnessed.find((v) => v.name === name) as (typeof vectors.witnessed)[0];
    const run = async (v: (typeof vectors.witnessed)[0]) => {
      hostile.serve(v);
      return plugin([
        'verify-proof',
        hostile.url,
        String(v.height),
        String(v.index),
        '--cluster',
        'vectors',
        '--kubeconfig',
        plane.kubeconfigPath,
        '-n',
        pinNs,
      ]);
    };
    const valid = await run(byName('a record of block 3, a checkpoint of 6 cosigned by both'));
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
    expect(valid.stdout).toContain('witness policy: 2 of w1, w2');
    const rewritten = await run(
      byName('the history rewritten with the same keys, its own checkpoint cosigned by a witness nobody trusts'),
    );
    expect(rewritten.code).toBe(1);
    expect(rewritten.stdout).toMatch(/INVALID: .*cosigned by 0 of the 2 trusted witnesses/);
    const half = await run(byName('cosigned by w1 only'));
    expect(half.code).toBe(1);
    expect(half.stdout).toMatch(/INVALID: .*w2: no cosignature/);
  });
});
