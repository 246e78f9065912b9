// The kubelet, played by the operator's integration tests with REAL ledger node processes: for each validator
// StatefulSet the operator creates, `start` runs `ledger-node` on loopback with the pod's own environment and files
// (the key Secret its StatefulSet mounts, the genesis ConfigMap, the token Secret, the peers ConfigMap; Service DNS
// names mapped to loopback ports), and the pod's Ready condition follows the node's /ready as a kubelet's
// readiness probe would. With `restartPods`, a pod the StatefulSet controller deletes (a rollout) is a new process
// from the new pod spec on the same data folder, as a real restart is.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STATEFUL_SET } from '../src/controllers/ledger-cluster/index.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { get, list } from './helpers.ts';

const MAIN = join(import.meta.dirname, '../../services/ledger-node/src/main.ts');

function decode(secret: KubeObject | undefined, key: string): string {
  return Buffer.from(secret?.data?.[key] ?? '', 'base64').toString('utf8');
}

/** A readiness probe's timing fields, with the defaults Kubernetes gives those the pod spec leaves out. */
const PROBE_DEFAULTS = { periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3 };
type Probe = typeof PROBE_DEFAULTS;

export class PlayedKubelet {
  readonly nodes = new Map<string, ChildProcess>();
  /**
   * The kubelet's view of each validator's container: its readiness probe (from the pod spec the operator wrote),
   * whether it is Ready, and the probe failures in a row. A kubelet marks a running container unready only after
   * `failureThreshold` failed probes, `periodSeconds` apart, each allowed `timeoutSeconds`; one slow or lagging
   * answer on a loaded machine does not flip it (nor does it here: an unready validator may be updated out of
   * turn, so a harsher kubelet than the real one changes what the operator does).
   */
  readonly #state = new Map<string, { probe: Probe; ready: boolean; failures: number; failingSince?: number }>();

  readonly client: KubeClient;
  readonly ns: string;
  readonly dir: string;
  readonly ports: ReadonlyMap<string, number>;
  readonly options: { cluster?: string; restartPods?: boolean };

  constructor(
    client: KubeClient,
    ns: string,
    dir: string,
    ports: ReadonlyMap<string, number>,
    options: { cluster?: string; restartPods?: boolean } = {},
  ) {
    this.client = client;
    this.ns = ns;
    this.dir = dir;
    this.ports = ports;
    this.options = options;
  }

  get #cluster(): string {
    return this.options.cluster ?? 'ledger';
  }

  /** Start the node of one validator from what the operator created, as its pod would run. */
  async start(name: string): Promise<void> {
    const sts = await get(this.client, STATEFUL_SET, this.ns, name);
    const container = sts?.spec.template.spec.containers[0];
    const keySecretName = (
      (sts?.spec.template.spec.volumes ?? []) as Array<{ name: string; secret?: { secretName: string } }>
    ).find((v) => v.name === 'key')?.secret?.secretName;
    const key = await get(this.client, RESOURCES.Secret, this.ns, keySecretName ?? `${name}-key`);
    const token = await get(this.client, RESOURCES.Secret, this.ns, `${this.#cluster}-token`);
    const genesis = await get(this.client, RESOURCES.ConfigMap, this.ns, `${this.#cluster}-genesis`);
    const peers = await get(this.client, RESOURCES.ConfigMap, this.ns, `${this.#cluster}-peers`);
    const home = join(this.dir, name);
    mkdirSync(join(home, 'data'), { recursive: true });
    const files = {
      '/etc/ledger-node/key/key.json': join(home, 'key.json'),
      '/etc/ledger-node/genesis/genesis.json': join(home, 'genesis.json'),
      '/etc/ledger-node/token/token': join(home, 'token'),
      '/var/lib/ledger-node/data': join(home, 'data'),
    };
    writeFileSync(files['/etc/ledger-node/key/key.json'], decode(key, 'key.json'), { mode: 0o600 });
    writeFileSync(files['/etc/ledger-node/genesis/genesis.json'], genesis?.data['genesis.json']);
    writeFileSync(files['/etc/ledger-node/token/token'], decode(token, 'token'));
    // Other Secret volumes (broker CA, PEP token, webhook signing key): only their listed keys, as files.
    const mountOf = new Map(
      (container.volumeMounts as Array<{ name: string; mountPath: string }>).map((m) => [m.name, m.mountPath]),
    );
    for (const v of (sts?.spec.template.spec.volumes ?? []) as Array<{
      name: string;
      secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
    }>) {
      if (!v.secret?.items) continue;
      const secret = await get(this.client, RESOURCES.Secret, this.ns, v.secret.secretName);
      mkdirSync(join(home, v.name), { recursive: true });
      for (const item of v.secret.items) {
        const file = join(home, v.name, item.path);
        writeFileSync(file, decode(secret, item.key), { mode: 0o600 });
        (files as Record<string, string>)[`${mountOf.get(v.name)}/${item.path}`] = file;
      }
    }
    const loopback = (text: string) =>
      text.replace(/([a-z0-9-]+)\.[a-z0-9-]+\.svc:8000/g, (_m, v: string) => `127.0.0.1:${this.ports.get(v)}`);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' };
    for (const e of container.env as Array<{ name: string; value?: string; valueFrom?: unknown }>) {
      if (e.name === 'NODE_PEERS') env[e.name] = loopback(peers?.data.peers ?? '');
      else if (e.value !== undefined) env[e.name] = files[e.value as keyof typeof files] ?? loopback(e.value);
    }
    env.NODE_CONSENSUS__BIND_HOST = '127.0.0.1';
    env.NODE_CONSENSUS__BIND_PORT = String(this.ports.get(name));
    env.NODE_PEERS__ANNOUNCE_INTERVAL_MS = '1000';
    env.NODE_SYNC__INTERVAL_MS = '500';
    // The debug API's POST /admin/submit is how the stall test puts load on the chain.
    env.NODE_DEBUG_API = 'true';
    const child = spawn(process.execPath, [MAIN, ...container.args], { env, stdio: 'ignore' });
    this.nodes.set(name, child);
    // A started container is not Ready until its readiness probe (the pod spec's) first succeeds.
    this.#state.set(name, { probe: { ...PROBE_DEFAULTS, ...container.readinessProbe }, ready: false, failures: 0 });
  }

  stop(name: string): void {
    this.nodes.get(name)?.kill('SIGKILL');
    this.nodes.delete(name);
    // A container that exits is unready at once.
    const state = this.#state.get(name);
    if (state) state.ready = false;
  }

  async nodeReady(name: string): Promise<boolean> {
    const { timeoutSeconds } = this.#state.get(name)?.probe ?? PROBE_DEFAULTS;
    try {
      const res = await fetch(`http://127.0.0.1:${this.ports.get(name)}/ready`, {
        signal: AbortSignal.timeout(timeoutSeconds * 1000),
      });
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** One readiness probe of a running container, as the kubelet counts it; whether the container is Ready now. */
  async #probeReadiness(name: string): Promise<boolean> {
    const ok = await this.nodeReady(name);
    const state = this.#state.get(name);
    if (!state) return ok;
    if (!this.nodes.has(name)) state.ready = false;
    else if (ok) Object.assign(state, { ready: true, failures: 0, failingSince: undefined });
    else {
      const now = Date.now();
      state.failures++;
      state.failingSince ??= now;
      const { failureThreshold, periodSeconds } = state.probe;
      if (
        state.failures >= failureThreshold &&
        now - state.failingSince >= (failureThreshold - 1) * periodSeconds * 1000
      )
        state.ready = false;
    }
    return state.ready;
  }

  /** The kubelet's readiness probe, played by the test: the pod's Ready condition follows the node's /ready. */
  async syncPodReadiness(name: string): Promise<boolean> {
    const ready = await this.#probeReadiness(name);
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = ready ? 'True' : 'False';
    await this.client
      .request('PATCH', resourcePath(RESOURCES.Pod, this.ns, `${name}-0`, 'status'), {
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            phase: 'Running',
            conditions: [
              { type: 'Ready', status, lastTransitionTime: now },
              { type: 'ContainersReady', status, lastTransitionTime: now },
            ],
          },
        },
      })
      .catch(() => undefined);
    return ready;
  }

  /** The kubelet's part: a deleted pod goes away (the node process stands in for the new pod), readiness. */
  async play(live: string[]): Promise<void> {
    for (const pod of await list(
      this.client,
      RESOURCES.Pod,
      this.ns,
      `scriptorium.dev/ledger-cluster=${this.#cluster}`,
    )) {
      if (!pod.metadata.deletionTimestamp) continue;
      await this.client
        .request('DELETE', resourcePath(RESOURCES.Pod, this.ns, pod.metadata.name), { body: { gracePeriodSeconds: 0 } })
        .catch(() => undefined);
      // Its replacement is a new pod: unready until its first probe succeeds.
      const validator = (pod.metadata.name ?? '').replace(/-0$/, '');
      const state = this.#state.get(validator);
      if (state) Object.assign(state, { ready: false, failures: 0, failingSince: undefined });
      if (this.options.restartPods && this.nodes.has(validator)) {
        this.stop(validator);
        await this.start(validator);
      }
    }
    await Promise.all(live.map((n) => this.syncPodReadiness(n)));
  }
}
