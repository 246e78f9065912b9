import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATEFUL_SET } from '../src/controllers/ledger-cluster/index.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import type { Operator } from '../src/operator.ts';
import { condition, create, createNamespace, eventually, get, list, startTestbed, type Testbed } from './helpers.ts';
import { LedgerKubelet } from './ledger-kubelet.ts';

/** `eventually` with room for a loaded machine (node hops and the reconcile cadence). */
function slowly<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  return eventually(what, check, 120_000);
}

// The LedgerCluster reconciler driving REAL ledger nodes. The test plays the kubelet: for each validator
// StatefulSet the operator creates, it starts `ledger-node start` on loopback with the pod's own environment
// (the operator's key Secret, genesis ConfigMap, token Secret and peers ConfigMap written to files, the Service
// DNS names mapped to loopback ports), and it reports the pod Ready exactly when the node's /ready says so.
// Then it retires a validator and watches the operator: a replacement is started as a follower, ADDed once
// caught up, the retired one REMOVEd, and its workload deleted only after the chain no longer lists it.
// Last, the day-2 diagnosis: two of the four validators are stopped under load, and the operator reports the stall
// and the round-change storm (conditions, Events, metrics), then their end when the two come back.
const NAMES = ['ledger-v0', 'ledger-v1', 'ledger-v2', 'ledger-v3', 'ledger-v4'];

let bed: Testbed;
let client: KubeClient;
let operator: Operator;
let ns: string;
let dir: string;
const ports = new Map<string, number>();
let kubelet: LedgerKubelet;

/**
 * How a rollout went, from every state the API server gave the namespace's StatefulSets (a watch from the current
 * resourceVersion, so no write is missed). A StatefulSet `changed` by the rollout is rolling from the write that
 * changed it (its status still of the older generation) until its status first shows that generation observed, its
 * pod on the new revision and Ready; after that it is rolled (a later readiness blip is not a rollout step).
 * Polling with lists instead misses a step that starts and ends between two polls, and counts a StatefulSet whose
 * status has not yet observed the change as finished.
 */
async function watchRollout(changed: (sts: KubeObject) => boolean) {
  const path = resourcePath(STATEFUL_SET, ns);
  const listed = await client.request<{ metadata: { resourceVersion: string } }>('GET', path);
  const rolling = new Set<string>();
  const rolled = new Set<string>();
  let mostAtOnce = 0;
  let failed: unknown;
  const abort = new AbortController();
  const watching = client
    .watch(
      path,
      { resourceVersion: listed.metadata.resourceVersion, timeoutSeconds: 600 },
      (event) => {
        if (event.type === 'ERROR') failed = new Error(`watch: ${JSON.stringify(event.object)}`);
        if (event.type === 'ERROR' || event.type === 'BOOKMARK') return;
        const sts = event.object as KubeObject;
        const name = sts.metadata.name ?? '';
        if (event.type === 'DELETED' || !changed(sts) || rolled.has(name)) {
          rolling.delete(name);
          return;
        }
        const s = sts.status ?? {};
        const settled =
          (s.observedGeneration ?? 0) >= (sts.metadata.generation ?? 0) &&
          s.readyReplicas === 1 &&
          s.updateRevision === s.currentRevision;
        if (settled) {
          rolling.delete(name);
          rolled.add(name);
        } else rolling.add(name);
        mostAtOnce = Math.max(mostAtOnce, rolling.size);
      },
      { signal: abort.signal },
    )
    .catch((err: unknown) => {
      if (!abort.signal.aborted) failed = err;
    });
  return {
    rolled,
    /** The most StatefulSets rolling at once; throws if the watch failed (the count would be incomplete). */
    async finish(): Promise<number> {
      abort.abort();
      await watching;
      if (failed) throw failed;
      return mostAtOnce;
    },
  };
}

beforeAll(async () => {
  for (const name of NAMES) ports.set(name, await freePort());
  dir = mkdtempSync(join(tmpdir(), 'scriptorium-ledger-op-'));
  bed = await startTestbed();
  client = bed.client;
  operator = await bed.startOperator({
    identity: 'ledger-membership',
    concurrency: 2,
    ledgerNodeUrl: (_lc, _spec, validator) => `http://127.0.0.1:${ports.get(validator)}`,
  });
});

afterAll(async () => {
  await kubelet?.stopAll();
  await bed?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Real processes on a shared 2-core machine: generous bounds (a loaded machine slows every hop).
describe('LedgerCluster membership with real ledger nodes', { timeout: 240_000 }, () => {
  it('runs the genesis validators from the operator-made keys and genesis: status from the nodes, Ready', async () => {
    ns = await createNamespace(client, 'lcm');
    // The debug API's POST /admin/submit is how the stall test puts load on the chain.
    kubelet = new LedgerKubelet(client, dir, { ports, env: { NODE_DEBUG_API: 'true' } });
    await create(client, {
      apiVersion: 'scriptorium.dev/v1alpha1',
      kind: 'LedgerCluster',
      metadata: { name: 'ledger', namespace: ns },
      spec: {
        image: 'scriptorium/ledger-node:test',
        validators: 4,
        genesis: { chainId: 'membership-test' },
        // Idle validators make an empty block every half second, so the height the operator reports keeps rising.
        consensus: { roundTimeoutBaseMs: 500, emptyBlockIntervalMs: 500 },
        tls: { mode: 'disabled' },
      },
    });
    for (const name of NAMES.slice(0, 4)) {
      await eventually(`pod of ${name}`, () => get(client, RESOURCES.Pod, ns, `${name}-0`));
      await kubelet.start(ns, name);
    }
    await eventually(
      'all four nodes ready',
      async () => {
        const ready = await Promise.all(NAMES.slice(0, 4).map((n: string) => kubelet.syncReady(ns, n)));
        return ready.every(Boolean);
      },
      120_000,
    );
    const lc = await slowly('Ready with height', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      // Idle validators finalize empty heartbeat blocks, so the height the operator reports keeps rising.
      return condition(got, 'Ready')?.status === 'True' && got?.status?.activeValidators === 4 && got.status.height >= 2
        ? got
        : undefined;
    });
    expect(lc.status.quorum).toBe(3);
    expect(lc.status.validators).toBe(4);
    expect(lc.status.members.every((m: { role: string }) => m.role === 'validator')).toBe(true);
    expect(lc.status.pendingChange).toBeUndefined();
  });

  it('retiring ledger-v1: ledger-v4 joins as a follower and is ADDed when caught up; v1 is REMOVEd, then deleted', async () => {
    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger'), {
      contentType: 'application/merge-patch+json',
      body: { spec: { retire: ['ledger-v1'] } },
    });
    await eventually('pod of ledger-v4', () => get(client, RESOURCES.Pod, ns, 'ledger-v4-0'));
    await kubelet.start(ns, 'ledger-v4');
    // Play the kubelet until the operator has deleted ledger-v1's StatefulSet.
    await eventually(
      'ledger-v1 retired',
      async () => {
        await Promise.all(
          ['ledger-v0', 'ledger-v2', 'ledger-v3', 'ledger-v4'].map((n: string) => kubelet.syncReady(ns, n)),
        );
        return (await get(client, STATEFUL_SET, ns, 'ledger-v1')) === undefined;
      },
      90_000,
    );
    await kubelet.stop(ns, 'ledger-v1'); // the kubelet would stop the pod now

    const lc = await slowly('status settles on the new set', async () => {
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      const names = (got?.status?.members ?? []).map((m: { name: string }) => m.name);
      return got?.status?.activeValidators === 4 && !names.includes('ledger-v1') && !got?.status?.pendingChange
        ? got
        : undefined;
    });
    expect(lc.status.members.map((m: { name: string; role: string }) => [m.name, m.role])).toEqual([
      ['ledger-v0', 'validator'],
      ['ledger-v2', 'validator'],
      ['ledger-v3', 'validator'],
      ['ledger-v4', 'validator'],
    ]);
    // The order of what the operator did, from its Events.
    const notes = (await list(client, RESOURCES.Event, ns))
      .filter((e) => e.regarding?.kind === 'LedgerCluster')
      .sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)))
      .map((e) => `${e.reason}: ${e.note}`);
    const at = (re: RegExp) => notes.findIndex((n) => re.test(n));
    const addSubmitted = at(/^MembershipChangeSubmitted: ADD ledger-v4/);
    const addFinal = at(/^MembershipChangeFinalized: ADD ledger-v4/);
    const removeSubmitted = at(/^MembershipChangeSubmitted: REMOVE ledger-v1/);
    const removeFinal = at(/^MembershipChangeFinalized: REMOVE ledger-v1/);
    const retired = at(/^ValidatorRetired: ledger-v1/);
    const log = notes.join('\n');
    expect(addSubmitted, log).toBeGreaterThanOrEqual(0);
    expect(addFinal, log).toBeGreaterThan(addSubmitted);
    expect(removeSubmitted, log).toBeGreaterThanOrEqual(0);
    expect(removeFinal, log).toBeGreaterThan(removeSubmitted);
    // Its workload went only after the REMOVE was final.
    expect(retired, log).toBeGreaterThan(removeFinal);
    // One change at a time, and a replacement adds before it removes.
    expect(removeSubmitted, log).toBeGreaterThan(addFinal);
    // The retired validator's Service went with it; its key Secret stays (the name keeps its key).
    expect(await get(client, RESOURCES.Service, ns, 'ledger-v1')).toBeUndefined();
    expect(await get(client, RESOURCES.Secret, ns, 'ledger-v1-key')).toBeDefined();
    // And the chain itself agrees: ask a node.
    const chain = (await (await fetch(`http://127.0.0.1:${ports.get('ledger-v0')}/chain`)).json()) as {
      validators: number;
      validator_keys: string[];
    };
    const v1Key = (await get(client, RESOURCES.Secret, ns, 'ledger-v1-key'))?.metadata.annotations?.[
      'scriptorium.dev/public-key'
    ];
    expect(chain.validators).toBe(4);
    // Both changes were finalized in blocks.
    expect(lc.status.height).toBeGreaterThanOrEqual(2);
    expect(chain.validator_keys).not.toContain(v1Key);
  });

  it('a new image rolls out one validator at a time', async () => {
    const live = ['ledger-v0', 'ledger-v2', 'ledger-v3', 'ledger-v4'];
    const rollout = await watchRollout((sts) => sts.spec.template.spec.containers[0].image.endsWith(':test-2'));
    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger'), {
      contentType: 'application/merge-patch+json',
      body: { spec: { image: 'scriptorium/ledger-node:test-2' } },
    });
    await eventually(
      'every validator on the new image and Ready',
      async () => {
        await kubelet.play(ns);
        return rollout.rolled.size === live.length;
      },
      90_000,
    );
    expect(await rollout.finish()).toBe(1);
    await slowly('Ready again', async () => {
      await kubelet.play(ns); // a kubelet keeps reporting after the rollout, too
      const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
      if (condition(got, 'Ready')?.status === 'True') return true;
      // On a timeout, say which condition held it back.
      throw new Error(
        (got?.status?.conditions ?? [])
          .map(
            (c: { type: string; status: string; reason: string; message: string }) =>
              `${c.type}=${c.status} ${c.reason}: ${c.message}`,
          )
          .join(' | '),
      );
    });
  });

  it('broker and notification settings reach every validator (Secrets as files), one validator at a time', async () => {
    const live = ['ledger-v0', 'ledger-v2', 'ledger-v3', 'ledger-v4'];
    const pem = execFileSync('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      join(dir, 'broker-ca.key'),
      '-days',
      '1',
      '-subj',
      '/CN=broker-ca',
    ]).toString('utf8');
    const secret = (name: string, data: Record<string, string>) =>
      create(client, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: ns },
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
      });
    await secret('broker-ca', { 'ca.pem': pem });
    await secret('tamper-hooks', { hmac: 'whsec_0123456789abcdef0123' });
    const watching = (sts: KubeObject) =>
      (sts.spec.template.spec.containers[0].env as Array<{ name: string }>).some(
        (e) => e.name === 'NODE_BROKER__PRIMARY_URL',
      );
    const rollout = await watchRollout(watching);
    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger'), {
      contentType: 'application/merge-patch+json',
      body: {
        spec: {
          brokers: {
            primary: { name: 'orion', url: 'https://127.0.0.1:1026' },
            federated: [{ name: 'partner', url: 'https://127.0.0.2:1026' }],
            tenant: 'city',
            caSecretRef: { name: 'broker-ca', key: 'ca.pem' },
            pollIntervalSeconds: 30,
          },
          notifications: [
            {
              name: 'soc',
              url: 'http://127.0.0.1:9/hooks',
              events: ['tamper'],
              secretRef: { name: 'tamper-hooks', key: 'hmac' },
            },
            { name: 'siem', url: 'udp://127.0.0.1:5514', events: ['tamper'] },
          ],
        },
      },
    });
    await eventually(
      'every validator with the broker settings and Ready',
      async () => {
        await kubelet.play(ns);
        return rollout.rolled.size === live.length;
      },
      90_000,
    );
    expect(await rollout.finish()).toBe(1);
    for (const sts of await list(client, STATEFUL_SET, ns)) {
      const c = sts.spec.template.spec.containers[0];
      const env = Object.fromEntries((c.env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value]));
      expect(env).toMatchObject({
        NODE_BROKER__PRIMARY_URL: 'https://127.0.0.1:1026',
        NODE_BROKER__FEDERATED_URLS: 'https://127.0.0.2:1026',
        NODE_BROKER__SERVICE: 'city',
        NODE_BROKER__POLL_INTERVAL_MS: '30000',
        NODE_BROKER__TLS_CA_FILE: '/etc/ledger-node/broker-ca/ca.pem',
        NODE_NOTIFY__WEBHOOK_URLS: 'http://127.0.0.1:9/hooks',
        NODE_NOTIFY__WEBHOOK_SECRET_FILE: '/etc/ledger-node/webhook-secret/hmac',
        NODE_NOTIFY__SYSLOG: 'udp://127.0.0.1:5514',
      });
      expect(JSON.stringify(c.env)).not.toContain('whsec_');
      const volumes = sts.spec.template.spec.volumes as Array<{ name: string; secret?: { secretName: string } }>;
      expect(volumes.find((v) => v.name === 'broker-ca')?.secret?.secretName).toBe('broker-ca');
      expect(volumes.find((v) => v.name === 'webhook-secret')?.secret?.secretName).toBe('tamper-hooks');
    }
    // The kubelet starts each new pod: every node takes the settings, files as mounted, and is Ready again.
    for (const name of live) {
      await kubelet.stop(ns, name);
      await kubelet.start(ns, name);
    }
    await slowly('the restarted validators Ready', async () => {
      await kubelet.play(ns);
      return (await Promise.all(live.map((n) => kubelet.nodeReady(ns, n)))).every(Boolean);
    });
  });
});

describe('LedgerCluster stall and round-change storm with real ledger nodes', { timeout: 300_000 }, () => {
  it('two of four validators stopped under load: Progressing=False/Stalled and RoundChangeStorm appear, then clear', async () => {
    const stopped = ['ledger-v3', 'ledger-v4'];
    await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, ns, 'ledger'), {
      contentType: 'application/merge-patch+json',
      body: { spec: { diagnostics: { stallAfterSeconds: 5, roundChangeStormRound: 3 } } },
    });
    const token = Buffer.from((await get(client, RESOURCES.Secret, ns, 'ledger-token'))?.data?.token ?? '', 'base64');
    // Load: synthetic records into the two validators that keep running, bounded in count and time.
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading && i < 600; i++) {
        for (const name of ['ledger-v0', 'ledger-v2']) {
          await fetch(`http://127.0.0.1:${ports.get(name)}/admin/submit?count=5`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token.toString('utf8')}` },
            signal: AbortSignal.timeout(2000),
          }).catch(() => undefined);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    })();
    const conditionsOf = (got: KubeObject | undefined) =>
      (got?.status?.conditions ?? [])
        .map((c: { type: string; status: string; reason: string }) => `${c.type}=${c.status}/${c.reason}`)
        .join(' ');
    try {
      for (const name of stopped) await kubelet.stop(ns, name);
      const stalled = await slowly('Progressing=False/Stalled and RoundChangeStorm=True', async () => {
        await kubelet.play(ns);
        const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
        const progressing = condition(got, 'Progressing');
        if (
          progressing?.status === 'False' &&
          progressing.reason === 'Stalled' &&
          condition(got, 'RoundChangeStorm')?.status === 'True'
        )
          return got;
        const st = got?.status ?? {};
        throw new Error(`${conditionsOf(got)} height ${st.height} round ${st.round} pending ${st.pendingRecords}`);
      });
      expect(condition(stalled, 'Progressing')?.message).toMatch(/No block finalized for \d+ s .* records/);
      expect(condition(stalled, 'Ready')?.status).toBe('False');
      expect(stalled.status.pendingRecords).toBeGreaterThan(0);
      expect(stalled.status.round).toBeGreaterThanOrEqual(3);
      // The gauges say what the operator's last look saw; while the two stay stopped, that is the stall.
      await eventually('the stalled and storm gauges at 1', async () => {
        const text = await operator.metrics.registry.metrics();
        return (
          text.includes(`scriptorium_operator_ledger_stalled{namespace="${ns}",name="ledger"} 1`) &&
          text.includes(`scriptorium_operator_ledger_round_change_storm{namespace="${ns}",name="ledger"} 1`)
        );
      });

      for (const name of stopped) await kubelet.start(ns, name);
      const cleared = await slowly('the stall and the storm end', async () => {
        await kubelet.play(ns);
        const got = await get(client, RESOURCES.LedgerCluster, ns, 'ledger');
        if (
          condition(got, 'Progressing')?.reason !== 'Stalled' &&
          condition(got, 'RoundChangeStorm')?.status === 'False' &&
          got?.status?.height > stalled.status.height
        )
          return got;
        throw new Error(`${conditionsOf(got)} height ${got?.status?.height}`);
      });
      expect(cleared.status.height).toBeGreaterThan(stalled.status.height);
      await eventually('the stalled gauge back at 0', async () =>
        (await operator.metrics.registry.metrics()).includes(
          `scriptorium_operator_ledger_stalled{namespace="${ns}",name="ledger"} 0`,
        ),
      );
    } finally {
      loading = false;
      await load;
    }
    // The operator writes the conditions first and then records the Events, one after the other: read them until both
    // endings are there (a CI run listed them between StallEnded and RoundChangeStormEnded).
    const eventReasons = async () =>
      (await list(client, RESOURCES.Event, ns))
        .filter((e) => e.regarding?.kind === 'LedgerCluster')
        .sort((a, b) => String(a.eventTime).localeCompare(String(b.eventTime)))
        .map((e) => `${e.type}/${e.reason}`);
    let reasons: string[] = [];
    await eventually('the Events of both endings', async () => {
      reasons = await eventReasons();
      return reasons.includes('Normal/StallEnded') && reasons.includes('Normal/RoundChangeStormEnded');
    }).catch(() => undefined);
    const at = (reason: string) => reasons.indexOf(reason);
    const log = reasons.join('\n');
    expect(at('Warning/Stalled'), log).toBeGreaterThanOrEqual(0);
    expect(at('Normal/StallEnded'), log).toBeGreaterThan(at('Warning/Stalled'));
    expect(at('Warning/RoundChangeStorm'), log).toBeGreaterThanOrEqual(0);
    expect(at('Normal/RoundChangeStormEnded'), log).toBeGreaterThan(at('Warning/RoundChangeStorm'));
  });
});
