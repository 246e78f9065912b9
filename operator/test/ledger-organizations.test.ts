// Two organizations, one chain, on a real control plane with real ledger nodes: organization A's LedgerCluster
// creates the chain; organization B's joins it from A's published genesis (`spec.genesis.from`: A's genesis
// ConfigMap, its hash pinned), with A's validators as seed peers and the chain's shared token. Each organization has
// its own operator (watching its own namespace) and its own CA, and each trusts the other's CA bundle: every peer
// connection is mutual TLS across the two CAs. The test plays the kubelet (ledger-kubelet.ts). Then: either side
// scales its validators 2 → 3 → 2 while the other keeps running, B's operator is stopped while A scales, and the
// chain keeps finalizing throughout.
import './fixtures/svc-dns.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Block, blockHash } from '@scriptorium/ledger-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { createClusterCa } from '../src/ledger/index.ts';
import type { Operator } from '../src/operator.ts';
import { condition, create, createNamespace, eventually, get, startTestbed, type Testbed } from './helpers.ts';
import { LedgerKubelet } from './ledger-kubelet.ts';

const CHAIN = 'two-organizations';
let bed: Testbed;
let client: KubeClient;
let dir: string;
let kubelet: LedgerKubelet;
const operators = new Map<string, Operator>();
let nsA: string;
let nsB: string;
let caA: { certPem: string; keyPem: string };
let caB: { certPem: string; keyPem: string };

const secret = (namespace: string, name: string, data: Record<string, string>, type = 'Opaque'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  type,
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

async function startOrgOperator(ns: string): Promise<Operator> {
  const op = await bed.startOperator({
    identity: `org-${ns}`,
    watchNamespace: ns,
    concurrency: 2,
    ledgerNodeUrl: (lc, _spec, validator) => kubelet.knownUrl(lc.metadata.namespace ?? '', validator, true),
  });
  operators.set(ns, op);
  return op;
}

/** Both clusters as the operators report them: what a timeout shows. */
async function describeBoth(): Promise<string> {
  const parts: string[] = [];
  for (const [ns, name] of [
    [nsA, 'org-a'],
    [nsB, 'org-b'],
  ] as const) {
    const s = (await lcOf(ns, name).catch(() => undefined))?.status ?? {};
    const conditions = (s.conditions ?? [])
      .map(
        (c: { type: string; status: string; reason: string; message: string }) =>
          `${c.type}=${c.status}/${c.reason}: ${c.message}`,
      )
      .join(' | ');
    parts.push(
      `${name}: height ${s.height} active ${s.activeValidators} members ${JSON.stringify(s.members)} pending ${JSON.stringify(s.pendingChange ?? null)} ${conditions}`,
    );
  }
  return parts.join('\n');
}

/** Plays the kubelet for both organizations until `check` holds; a timeout says where both clusters stood. */
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 180_000): Promise<T> {
  try {
    return await eventually(
      what,
      async () => {
        await kubelet.play(nsA, 'org-a');
        if (nsB) await kubelet.play(nsB, 'org-b');
        return check();
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${await describeBoth()}`);
  }
}

const lcOf = (ns: string, name: string) => get(client, RESOURCES.LedgerCluster, ns, name);
const scale = (ns: string, name: string, validators: number) =>
  client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, name), {
    contentType: 'application/merge-patch+json',
    body: { spec: { validators } },
  });
const chainOf = (ns: string, validator: string) =>
  kubelet.getJson<{ height: number; validator_keys: string[] }>(ns, validator, '/chain');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-orgs-'));
  bed = await startTestbed();
  client = bed.client;
  nsA = await createNamespace(client, 'org-a');
  nsB = await createNamespace(client, 'org-b');
  caA = await createClusterCa({ commonName: 'organization A ledger CA', now: new Date() });
  caB = await createClusterCa({ commonName: 'organization B ledger CA', now: new Date() });
  // The probes and this process trust both CAs; node processes get theirs from the operators (and the bundles).
  kubelet = new LedgerKubelet(client, join(dir, 'nodes'), { ca: `${caA.certPem}\n${caB.certPem}` });
  await startOrgOperator(nsA);
  await startOrgOperator(nsB);
});

afterAll(async () => {
  await kubelet?.stopAll();
  await bed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('two organizations, one chain', { timeout: 900_000 }, () => {
  it('A creates the chain; B joins from its genesis: both validator sets active, mutual TLS across two CAs', async () => {
    for (const [ns, mine, theirs] of [
      [nsA, caA, caB],
      [nsB, caB, caA],
    ] as const) {
      await create(client, secret(ns, 'ca', { 'tls.crt': mine.certPem, 'tls.key': mine.keyPem }, 'kubernetes.io/tls'));
      await create(client, secret(ns, 'other-organization-ca', { 'ca.crt': theirs.certPem }));
    }
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'org-a', namespace: nsA },
      spec: {
        image: 'scriptorium/ledger-node:test',
        validators: 2,
        genesis: { chainId: CHAIN },
        consensus: { roundTimeoutBaseMs: 500, emptyBlockIntervalMs: 1000 },
        tls: {
          mode: 'mutual',
          caSecretRef: { name: 'ca' },
          trustedCaSecretRef: { name: 'other-organization-ca', key: 'ca.crt' },
        },
      },
    });
    const a = await until('organization A finalizing with its two validators', async () => {
      const lc = await lcOf(nsA, 'org-a');
      return lc?.status?.activeValidators === 2 && lc.status.height >= 2 ? lc : undefined;
    });
    expect(condition(a, 'Ready')?.status).toBe('True');

    // What organization A publishes: its genesis ConfigMap (and its hash), its validators' addresses, the token.
    const genesisCm = (await get(client, RESOURCES.ConfigMap, nsA, 'org-a-genesis')) as KubeObject;
    const genesisHash = blockHash((JSON.parse(genesisCm.data['genesis.json']) as Block).header);
    const keyOf = async (ns: string, v: string) =>
      (await get(client, RESOURCES.Secret, ns, `${v}-key`))?.metadata.annotations?.[
        'scriptorium.dev/public-key'
      ] as string;
    const token = (await get(client, RESOURCES.Secret, nsA, 'org-a-token'))?.data?.token as string;
    await create(client, secret(nsB, 'chain-token', { token: Buffer.from(token, 'base64').toString('utf8') }));
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'org-b', namespace: nsB },
      spec: {
        image: 'scriptorium/ledger-node:test',
        validators: 2,
        genesis: { from: { configMapRef: { namespace: nsA, name: 'org-a-genesis' }, hash: genesisHash } },
        clusterTokenSecretRef: { name: 'chain-token', key: 'token' },
        externalValidators: await Promise.all(
          ['org-a-v0', 'org-a-v1'].map(async (v) => ({
            publicKey: await keyOf(nsA, v),
            address: `${v}.${nsA}.svc:8000`,
            organization: 'A',
          })),
        ),
        consensus: { roundTimeoutBaseMs: 500, emptyBlockIntervalMs: 1000 },
        tls: {
          mode: 'mutual',
          caSecretRef: { name: 'ca' },
          trustedCaSecretRef: { name: 'other-organization-ca', key: 'ca.crt' },
        },
      },
    });
    const joined = await until('B joined: four validators active, both organizations Ready', async () => {
      const [la, lb] = [await lcOf(nsA, 'org-a'), await lcOf(nsB, 'org-b')];
      return la?.status?.activeValidators === 4 &&
        lb?.status?.activeValidators === 4 &&
        condition(lb, 'Ready')?.status === 'True' &&
        condition(la, 'Ready')?.status === 'True'
        ? { la, lb }
        : undefined;
    });
    expect(joined.lb.status.members.map((m: { role: string }) => m.role)).toEqual(['validator', 'validator']);
    // B's genesis is A's, byte for byte.
    const copied = (await get(client, RESOURCES.ConfigMap, nsB, 'org-b-genesis')) as KubeObject;
    expect(copied.data['genesis.json']).toBe(genesisCm.data['genesis.json']);
    // One chain: both organizations' nodes report the same hashes.
    const [ca, cb] = [await chainOf(nsA, 'org-a-v0'), await chainOf(nsB, 'org-b-v0')];
    expect(new Set(ca?.validator_keys)).toEqual(new Set(cb?.validator_keys));
    for (const v of ['org-b-v0', 'org-b-v1']) expect(ca?.validator_keys).toContain(await keyOf(nsB, v));
  });

  it('either side scales 2 → 3 → 2 while the other keeps running; the chain keeps finalizing', async () => {
    for (const [ns, name] of [
      [nsA, 'org-a'],
      [nsB, 'org-b'],
    ] as const) {
      const before = (await lcOf(nsA, 'org-a'))?.status?.height as number;
      await scale(ns, name, 3);
      await until(`${name} at 3: five validators active`, async () => {
        const lc = await lcOf(ns, name);
        return lc?.status?.activeValidators === 5 && !lc.status.pendingChange ? lc : undefined;
      });
      await scale(ns, name, 2);
      const back = await until(`${name} back at 2: four validators active, the third one's workload gone`, async () => {
        const lc = await lcOf(ns, name);
        const other = await lcOf(ns === nsA ? nsB : nsA, ns === nsA ? 'org-b' : 'org-a');
        return lc?.status?.activeValidators === 4 &&
          !lc.status.pendingChange &&
          lc.status.members.length === 2 &&
          other?.status?.activeValidators === 4
          ? lc
          : undefined;
      });
      expect(back.status.height).toBeGreaterThan(before);
    }
  });

  it("organization B's operator stopped: A still scales, the chain keeps finalizing with B's validators in it", async () => {
    await operators.get(nsB)?.stop();
    operators.delete(nsB);
    const before = (await chainOf(nsA, 'org-a-v0'))?.height ?? 0;
    await scale(nsA, 'org-a', 3);
    await until("A at 3 without B's operator", async () => {
      const lc = await lcOf(nsA, 'org-a');
      return lc?.status?.activeValidators === 5 && !lc.status.pendingChange ? lc : undefined;
    });
    await scale(nsA, 'org-a', 2);
    await until('A back at 2', async () => {
      const lc = await lcOf(nsA, 'org-a');
      return lc?.status?.activeValidators === 4 && !lc.status.pendingChange && lc.status.members.length === 2
        ? lc
        : undefined;
    });
    const after = await chainOf(nsB, 'org-b-v1');
    expect(after?.height).toBeGreaterThan(before + 3);
    await startOrgOperator(nsB);
    await until(
      'B reconciled again, Ready',
      async () => condition(await lcOf(nsB, 'org-b'), 'Ready')?.status === 'True',
    );
  });
});
