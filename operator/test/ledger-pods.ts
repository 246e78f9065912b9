// The kubelet, played by the operator's integration tests with REAL ledger node processes: for each validator
// StatefulSet the operator creates, `start` runs `ledger-node` on loopback with the pod's own environment and files
// (the key Secret its StatefulSet mounts, the genesis ConfigMap, the token Secret, the peers ConfigMap; Service DNS
// names mapped to loopback ports), and the pod's Ready condition follows the node's /ready as a kubelet's
// readiness probe would. With `restartPods`, a pod the StatefulSet controller deletes (a rollout) is a new process
// from the new pod spec on the same data folder, as a real restart is. A validator pod's `restore` init container
// (spec.bootstrap.fromBackup) runs to its end first, and the node starts only when it succeeded; the backup and
// restore-drill Jobs' pods run their command too (`runJobPods`), and each finished container's termination message
// is written into the pod's status, as a kubelet does.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** A finished container, as the kubelet reports it. */
export interface Terminated {
  exitCode: number;
  message: string;
  startedAt: string;
  finishedAt: string;
}

const rfc3339 = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Volume {
  name: string;
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  configMap?: { name: string; items?: Array<{ key: string; path: string }> };
  projected?: { sources: Array<{ secret?: { name: string; items?: Array<{ key: string; path: string }> } }> };
  emptyDir?: object;
}

/**
 * A pod's volumes as local folders under `home` (Secrets and ConfigMaps with their listed items or every key,
 * projected Secrets, emptyDirs; the validator's `data` volume is `home/data`), and a function from a path in the
 * container to the local one (`/dev/termination-log` included).
 */
async function mountVolumes(
  client: KubeClient,
  ns: string,
  podSpec: { volumes?: Volume[] },
  container: { name: string; volumeMounts?: Array<{ name: string; mountPath: string }> },
  home: string,
): Promise<(path: string) => string> {
  const folderOf = new Map<string, string>();
  const write = (folder: string, data: Record<string, string>, items?: Array<{ key: string; path: string }>) => {
    mkdirSync(folder, { recursive: true });
    for (const item of items ?? Object.keys(data).map((key) => ({ key, path: key })))
      writeFileSync(join(folder, item.path), data[item.key] ?? '', { mode: 0o600 });
  };
  const secretData = async (name: string) => {
    const secret = await get(client, RESOURCES.Secret, ns, name);
    return Object.fromEntries(Object.keys(secret?.data ?? {}).map((k) => [k, decode(secret, k)]));
  };
  for (const v of podSpec.volumes ?? []) {
    const folder = v.name === 'data' ? join(home, 'data') : join(home, 'volumes', container.name, v.name);
    folderOf.set(v.name, folder);
    if (v.secret) write(folder, await secretData(v.secret.secretName), v.secret.items);
    else if (v.configMap)
      write(folder, (await get(client, RESOURCES.ConfigMap, ns, v.configMap.name))?.data ?? {}, v.configMap.items);
    else if (v.projected)
      for (const source of v.projected.sources)
        if (source.secret) write(folder, await secretData(source.secret.name), source.secret.items);
    mkdirSync(folder, { recursive: true });
  }
  folderOf.set('data', join(home, 'data'));
  const mounts = (container.volumeMounts ?? [])
    .map((m) => ({ path: m.mountPath, local: folderOf.get(m.name) ?? join(home, 'volumes', container.name, m.name) }))
    .sort((a, b) => b.path.length - a.path.length);
  for (const m of mounts) mkdirSync(m.local, { recursive: true });
  const termination = join(home, `termination-log-${container.name}`);
  return (path: string) => {
    if (path === '/dev/termination-log') return termination;
    const m = mounts.find((x) => path === x.path || path.startsWith(`${x.path}/`));
    return m ? m.local + path.slice(m.path.length) : path;
  };
}

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
  /** The uid of the pod each running node stands in for. */
  readonly #podUid = new Map<string, string | undefined>();

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
    this.#podUid.set(name, (await get(this.client, RESOURCES.Pod, this.ns, `${name}-0`))?.metadata.uid);
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
    const loopback = (text: string) => this.loopback(text);
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

  /**
   * The kubelet's part: a deleted pod goes away (the node process stands in for the new pod), readiness. A pod
   * that is not bound to a node (none is, on the test control plane) is deleted at once, without a
   * deletionTimestamp ever being seen: its replacement is recognised by its new uid, and the node is restarted
   * from the new pod spec then, as a real kubelet runs the new pod.
   */
  async play(live: string[]): Promise<void> {
    for (const pod of await list(
      this.client,
      RESOURCES.Pod,
      this.ns,
      `scriptorium.dev/ledger-cluster=${this.#cluster}`,
    )) {
      const replaced = pod.metadata.labels?.['scriptorium.dev/validator'] ?? '';
      if (
        !pod.metadata.deletionTimestamp &&
        this.options.restartPods &&
        this.nodes.has(replaced) &&
        this.#podUid.get(replaced) !== pod.metadata.uid
      ) {
        const state = this.#state.get(replaced);
        if (state) Object.assign(state, { ready: false, failures: 0, failingSince: undefined });
        this.stop(replaced);
        await this.start(replaced);
        continue;
      }
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

  /** Service DNS names (`<validator>.<ns>.svc:8000`) to the validators' loopback ports. */
  loopback(text: string): string {
    return text.replace(/([a-z0-9-]+)\.[a-z0-9-]+\.svc:8000/g, (_m, v: string) => `127.0.0.1:${this.ports.get(v)}`);
  }

  /**
   * Runs one container of a pod to its end, as `ledger-node <args>` with the container's environment (paths into
   * its volumes mapped to local folders, Service names to loopback); its exit code and termination message.
   */
  async runContainer(
    podSpec: { volumes?: Volume[] },
    container: {
      name: string;
      args: string[];
      env?: Array<{ name: string; value?: string }>;
      volumeMounts?: Array<{ name: string; mountPath: string }>;
    },
    home: string,
  ): Promise<Terminated> {
    const local = await mountVolumes(this.client, this.ns, podSpec, container, home);
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' };
    for (const e of container.env ?? [])
      if (e.value !== undefined) env[e.name] = e.value.startsWith('/') ? local(e.value) : this.loopback(e.value);
    const startedAt = rfc3339(new Date());
    const exitCode = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, [MAIN, ...container.args], { env, stdio: 'ignore' });
      child.on('exit', (code) => resolve(code ?? 1));
    });
    const file = local('/dev/termination-log');
    const message = existsSync(file) ? readFileSync(file, 'utf8') : '';
    return { exitCode, message, startedAt, finishedAt: rfc3339(new Date()) };
  }

  /**
   * A validator pod's init containers (the restore of spec.bootstrap.fromBackup), run to their end before its node
   * starts; each one's result goes into the pod's `initContainerStatuses`. False when one failed: the node is not
   * started (a kubelet would retry the init container with a back-off; the test looks at the first failure).
   */
  async runInitContainers(name: string): Promise<boolean> {
    const sts = await get(this.client, STATEFUL_SET, this.ns, name);
    const podSpec = sts?.spec.template.spec;
    const statuses: object[] = [];
    let ok = true;
    for (const init of podSpec?.initContainers ?? []) {
      const t = await this.runContainer(podSpec, init, join(this.dir, name));
      statuses.push(containerStatus(init.name, init.image, t));
      if (t.exitCode !== 0) {
        ok = false;
        break;
      }
    }
    if (statuses.length > 0)
      await this.client.request('PATCH', resourcePath(RESOURCES.Pod, this.ns, `${name}-0`, 'status'), {
        contentType: 'application/merge-patch+json',
        body: { status: { phase: ok ? 'Running' : 'Pending', initContainerStatuses: statuses } },
      });
    return ok;
  }

  /**
   * The backup and restore-drill pods of the cluster not run yet: each runs its command, and ends Succeeded or
   * Failed with the container's termination message, as the kubelet reports a finished container (the Job
   * controller then completes the Job, or makes another pod within its backoffLimit). Returns how many ran.
   */
  async runJobPods(): Promise<number> {
    let ran = 0;
    for (const kind of ['backup', 'backup-verify']) {
      const pods = await list(
        this.client,
        RESOURCES.Pod,
        this.ns,
        `scriptorium.dev/ledger-cluster=${this.#cluster},app.kubernetes.io/component=${kind}`,
      );
      for (const pod of pods) {
        if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')
          continue;
        const container = pod.spec.containers[0];
        const t = await this.runContainer(pod.spec, container, join(this.dir, 'jobs', pod.metadata.name ?? kind));
        await this.client.request('PATCH', resourcePath(RESOURCES.Pod, this.ns, pod.metadata.name, 'status'), {
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              phase: t.exitCode === 0 ? 'Succeeded' : 'Failed',
              startTime: t.startedAt,
              containerStatuses: [containerStatus(container.name, container.image, t)],
            },
          },
        });
        ran++;
      }
    }
    return ran;
  }
}

function containerStatus(name: string, image: string, t: Terminated): object {
  return {
    name,
    image,
    imageID: '',
    ready: false,
    restartCount: 0,
    started: false,
    state: {
      terminated: {
        exitCode: t.exitCode,
        reason: t.exitCode === 0 ? 'Completed' : 'Error',
        message: t.message,
        startedAt: t.startedAt,
        finishedAt: t.finishedAt,
      },
    },
  };
}
