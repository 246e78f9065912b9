// A LedgerCluster with a witness, on a real control plane with real ledger nodes (the test plays the kubelet,
// ledger-kubelet.ts) and a real `ledger-node witness`: the operator reports Witnessed=True/PolicyMet and each
// witness's cosigned size; with the witness down the chain keeps finalizing, and once blocks have waited longer than
// witnessPolicy.unwitnessedAfterSeconds the condition turns False (with the witness's error), the gauges
// scriptorium_operator_ledger_witnessed and …_witness_behind_blocks show it, and a Warning Event says so; when the
// witness returns it catches up and the condition is True again.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalWitness, witnessLogOf } from '@scriptorium/harness/local-witness';
import { ALG_COSIGNATURE_V1, defaultOrigin, formatVerifierKey } from '@scriptorium/ledger-protocol';
import { generateKeyPair, keyFileContent } from '@scriptorium/ledger-protocol/keys';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES } from '../src/kube/resources.ts';
import type { Operator } from '../src/operator.ts';
import { condition, create, createNamespace, eventually, get, list, startTestbed, type Testbed } from './helpers.ts';
import { LedgerKubelet } from './ledger-kubelet.ts';

const CHAIN = 'witnessed';
let bed: Testbed;
let client: KubeClient;
let operator: Operator;
let kubelet: LedgerKubelet;
let witness: LocalWitness | undefined;
let dir: string;
let ns: string;

const lc = () => get(client, RESOURCES.LedgerCluster, ns, 'ledger');
async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  try {
    return await eventually(
      what,
      async () => {
        await kubelet.play(ns, 'ledger');
        return check();
      },
      timeoutMs,
    );
  } catch (err) {
    // Where the cluster stood, and what a node says of witnessing.
    const s = (await lc())?.status ?? {};
    const node = await kubelet.getJson(ns, 'ledger-v0', '/checkpoint/witnesses', false);
    const pods = (await list(client, RESOURCES.Pod, ns)).map((p) => `${p.metadata.name}:${p.status?.phase}`);
    throw new Error(
      `${(err as Error).message}\nstatus ${JSON.stringify(s)}\nnode ${JSON.stringify(node)}\npods ${pods.join(' ')}`,
    );
  }
}
const gauge = async (line: string) => (await operator.metrics.registry.metrics()).includes(line);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-witnessed-'));
  bed = await startTestbed();
  client = bed.client;
  kubelet = new LedgerKubelet(client, join(dir, 'nodes'));
  operator = await bed.startOperator({
    identity: 'ledger-witnessing',
    concurrency: 2,
    ledgerNodeUrl: (l, _spec, validator) => kubelet.knownUrl(l.metadata.namespace ?? '', validator, false),
  });
  ns = await createNamespace(client, 'witnessed');
});

afterAll(async () => {
  await kubelet?.stopAll();
  await witness?.stop();
  await bed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('LedgerCluster witnessing with real ledger nodes and a witness', { timeout: 300_000 }, () => {
  it('Witnessed=True with the witness up; False (condition, metric, Event) once it is down long enough; True again', async () => {
    // The witness's key and port are chosen first (they go into the spec); it starts once the validators' keys exist.
    const wdir = join(dir, 'witness');
    const keys = generateKeyPair();
    mkdirSync(wdir, { recursive: true });
    writeFileSync(join(wdir, 'key.json'), keyFileContent(keys), { mode: 0o600 });
    const port = await freePort();
    const name = 'witness.test/operator';
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'ledger', namespace: ns },
      spec: {
        image: 'scriptorium/ledger-node:test',
        validators: 3,
        genesis: { chainId: CHAIN },
        consensus: { roundTimeoutBaseMs: 500, emptyBlockIntervalMs: 500 },
        tls: { mode: 'disabled' },
        witnesses: [
          {
            name: 'w1',
            url: `http://127.0.0.1:${port}`,
            key: formatVerifierKey(name, ALG_COSIGNATURE_V1, keys.publicKey),
          },
        ],
        witnessPolicy: { threshold: 1, unwitnessedAfterSeconds: 4 },
        checkpoints: { intervalMs: 500 },
      },
    });
    const validatorKeys = await eventually("the validators' key Secrets", async () => {
      const secrets = await list(client, RESOURCES.Secret, ns, 'app.kubernetes.io/component=key');
      const found = secrets
        .map((s) => s.metadata.annotations?.['scriptorium.dev/public-key'])
        .filter(Boolean) as string[];
      return found.length === 3 ? found : undefined;
    });
    witness = await LocalWitness.start({
      name,
      dir: wdir,
      port,
      logs: [witnessLogOf(defaultOrigin(CHAIN), validatorKeys)],
    });
    expect(witness.verifierKey).toBe(formatVerifierKey(name, ALG_COSIGNATURE_V1, keys.publicKey));

    const up = await until('Witnessed=True/PolicyMet with the witness cosigning', async () => {
      const got = await lc();
      return condition(got, 'Witnessed')?.reason === 'PolicyMet' && got?.status?.witnessedSize >= 2 ? got : undefined;
    });
    expect(up.status.witnesses[0]).toMatchObject({ name: 'w1', behind: expect.any(Number) });
    expect(up.status.witnesses[0].cosignedSize).toBeGreaterThanOrEqual(2);
    await eventually('the witnessed gauge at 1', () =>
      gauge(`scriptorium_operator_ledger_witnessed{namespace="${ns}",name="ledger"} 1`),
    );

    await witness.stop('SIGKILL');
    const down = await until('Witnessed=False once blocks waited longer than 4 s', async () => {
      const got = await lc();
      return condition(got, 'Witnessed')?.status === 'False' ? got : undefined;
    });
    expect(condition(down, 'Witnessed')?.reason).toBe('Unwitnessed');
    expect(condition(down, 'Witnessed')?.message).toMatch(/w1: unreachable/);
    expect(down.status.witnesses[0].behind).toBeGreaterThan(0);
    expect(down.status.unwitnessedSince).toBeDefined();
    // The chain kept finalizing: witnessing is not on its path.
    expect(down.status.height).toBeGreaterThan(up.status.height);
    await eventually(
      'the gauges show it',
      async () =>
        (await gauge(`scriptorium_operator_ledger_witnessed{namespace="${ns}",name="ledger"} 0`)) &&
        !(await gauge(
          `scriptorium_operator_ledger_witness_behind_blocks{namespace="${ns}",name="ledger",witness="w1"} 0`,
        )),
    );
    await eventually('a Warning Event Unwitnessed', async () =>
      (await list(client, RESOURCES.Event, ns)).some((e) => e.reason === 'Unwitnessed' && e.type === 'Warning'),
    );

    await witness.restart();
    await until('Witnessed=True again', async () => condition(await lc(), 'Witnessed')?.reason === 'PolicyMet');
    await eventually('the witnessed gauge back at 1', () =>
      gauge(`scriptorium_operator_ledger_witnessed{namespace="${ns}",name="ledger"} 1`),
    );
    await eventually('a Normal Event WitnessedAgain', async () =>
      (await list(client, RESOURCES.Event, ns)).some((e) => e.reason === 'WitnessedAgain'),
    );
  });
});
