// The kubelet's part for LedgerCluster validators on a test control plane (which has no kubelet), played with REAL
// ledger node processes: for each validator StatefulSet the operator made, `ledger-node start` as its pod would run
// it — the pod's own environment, its volumes as folders (Secrets and ConfigMaps written as files, only the listed
// keys where a volume lists them; the volume claim as a data folder that outlives the process), Service names kept
// (fixtures/svc-dns.ts resolves them to loopback) with each validator on a port of its own — and the pod reported
// Ready exactly as a kubelet would from the pod's readiness probe. A pod's init containers (the restore of
// spec.bootstrap.fromBackup) run to their end before its node starts, and the backup and drill Jobs' pods run their
// command (`runJobPods`); each finished container's termination message goes into the pod's status. Several
// namespaces (organizations) at once. This process resolves the Service names too (its probes, and an operator in
// this process calling the nodes).
import './fixtures/svc-dns.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support/ports';
import { Agent, request } from 'undici';
import { STATEFUL_SET } from '../src/controllers/ledger-cluster/index.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { RESOURCES, resourcePath } from '../src/kube/resources.ts';
import type { KubeObject } from '../src/kube/types.ts';
import { get, list } from './helpers.ts';

const MAIN = join(import.meta.dirname, '../../services/ledger-node/src/main.ts');
export const SVC_DNS = join(import.meta.dirname, 'fixtures/svc-dns.ts');

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

type Items = Array<{ key: string; path: string }>;
interface Volume {
  name: string;
  secret?: { secretName: string; items?: Items };
  configMap?: { name: string; items?: Items };
  projected?: { sources: Array<{ secret?: { name: string; items?: Items } }> };
}
interface Container {
  name: string;
  image?: string;
  args: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { configMapKeyRef?: { name: string; key: string } } }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  readinessProbe?: Partial<Probe> & { httpGet?: { scheme?: string } };
}
interface PodSpec {
  volumes?: Volume[];
  initContainers?: Container[];
  containers: Container[];
}

const decode = (data: string) => Buffer.from(data, 'base64').toString('utf8');

export class LedgerKubelet {
  private readonly client: KubeClient;
  private readonly dir: string;
  private readonly env: Record<string, string>;
  private readonly fixedPorts?: ReadonlyMap<string, number>;
  private readonly ports = new Map<string, number>();
  private readonly nodes = new Map<string, ChildProcess>();
  /** The pod each running node stands for (a new pod, after a rollout, restarts it). */
  private readonly podOf = new Map<string, string | undefined>();
  /** Validators the test stopped: they stay down until it starts them again. */
  private readonly held = new Set<string>();
  /**
   * The kubelet's view of each validator's container: its readiness probe (from the pod spec the operator wrote),
   * whether it is Ready, and the probe failures in a row. A kubelet marks a running container unready only after
   * `failureThreshold` failed probes, `periodSeconds` apart, each allowed `timeoutSeconds`; one slow answer on a
   * loaded machine does not flip it (nor does it here: an unready validator may be updated out of turn, so a
   * harsher kubelet than the real one changes what the operator does).
   */
  private readonly probes = new Map<
    string,
    { probe: Probe; ready: boolean; failures: number; failingSince?: number; scheme: string }
  >();
  private readonly agent: Agent;

  /**
   * `ca`: every CA a node's certificate may come from (the probes verify them); `env`: added to every node;
   * `ports`: a fixed port per validator name (one cluster at a time), instead of a free port per namespace and name.
   */
  constructor(
    client: KubeClient,
    dir: string,
    options: { ca?: string; env?: Record<string, string>; ports?: ReadonlyMap<string, number> } = {},
  ) {
    this.client = client;
    this.dir = dir;
    this.env = options.env ?? {};
    this.fixedPorts = options.ports;
    this.agent = new Agent({ connect: options.ca ? { ca: options.ca } : {} });
  }

  private async portOf(ns: string, name: string): Promise<number> {
    const key = `${ns}/${name}`;
    let port = this.ports.get(key) ?? this.fixedPorts?.get(name);
    if (port === undefined) port = await freePort();
    this.ports.set(key, port);
    return port;
  }

  /** The URL a validator answers at, once it has a port (else one nothing listens on): what the operator calls. */
  knownUrl(ns: string, name: string, tls: boolean): string {
    const port = this.ports.get(`${ns}/${name}`) ?? this.fixedPorts?.get(name) ?? 1;
    return `${tls ? 'https' : 'http'}://${name}.${ns}.svc:${port}`;
  }

  /** The URL a validator answers at (its Service name, its own port). */
  async url(ns: string, name: string, tls: boolean): Promise<string> {
    return `${tls ? 'https' : 'http'}://${name}.${ns}.svc:${await this.portOf(ns, name)}`;
  }

  /** Every `<name>.<ns>.svc:8000` in a text with that validator's own port. */
  private async localize(text: string): Promise<string> {
    const found = [...text.matchAll(/([a-z0-9-]+)\.([a-z0-9-]+)\.svc:8000/g)];
    for (const m of found) await this.portOf(m[2] as string, m[1] as string);
    return text.replace(
      /([a-z0-9-]+)\.([a-z0-9-]+)\.svc:8000/g,
      (_m, v: string, ns: string) => `${v}.${ns}.svc:${this.ports.get(`${ns}/${v}`)}`,
    );
  }

  /**
   * A pod's volumes as folders under `home` (Secrets and ConfigMaps with their listed items or every key, projected
   * Secrets, the rest empty; `claims`, the StatefulSet's volume claim templates, too), and a function from a path in
   * `container` to the local one (`/dev/termination-log` included). A path under no mount in /etc or /var would be
   * this machine's own: refused rather than written there.
   */
  private async mountVolumes(
    ns: string,
    pod: PodSpec,
    container: Container,
    home: string,
    claims: string[],
  ): Promise<(path: string) => string> {
    const folderOf = new Map<string, string>();
    const write = (folder: string, data: Record<string, string>, items?: Items) => {
      for (const item of items ?? Object.keys(data).map((key) => ({ key, path: key })))
        writeFileSync(join(folder, item.path), data[item.key] ?? '', { mode: 0o600 });
    };
    const secretData = async (name: string) => {
      const secret = await get(this.client, RESOURCES.Secret, ns, name);
      const data = (secret?.data ?? {}) as Record<string, string>;
      return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, decode(v)]));
    };
    for (const claim of claims) folderOf.set(claim, join(home, claim));
    for (const v of pod.volumes ?? []) {
      const folder = join(home, v.name);
      folderOf.set(v.name, folder);
      mkdirSync(folder, { recursive: true });
      if (v.secret) write(folder, await secretData(v.secret.secretName), v.secret.items);
      else if (v.configMap)
        write(
          folder,
          (await get(this.client, RESOURCES.ConfigMap, ns, v.configMap.name))?.data ?? {},
          v.configMap.items,
        );
      else if (v.projected)
        for (const source of v.projected.sources)
          if (source.secret) write(folder, await secretData(source.secret.name), source.secret.items);
    }
    const mounts = (container.volumeMounts ?? [])
      .filter((m) => folderOf.has(m.name))
      .map((m) => ({ path: m.mountPath, local: folderOf.get(m.name) as string }))
      .sort((a, b) => b.path.length - a.path.length);
    for (const m of mounts) mkdirSync(m.local, { recursive: true });
    const termination = join(home, `termination-log-${container.name}`);
    return (path: string) => {
      if (path === '/dev/termination-log') return termination;
      const m = mounts.find((x) => path === x.path || path.startsWith(`${x.path}/`));
      if (m) return m.local + path.slice(m.path.length);
      if (path.startsWith('/etc/') || path.startsWith('/var/')) throw new Error(`${ns}: ${path} is under no volume`);
      return path;
    };
  }

  /** A container's environment: its values (paths into its volumes made local, Service names on their ports). */
  private async envOf(ns: string, container: Container, local: (path: string) => string) {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' };
    for (const e of container.env ?? []) {
      if (e.valueFrom?.configMapKeyRef) {
        const cm = await get(this.client, RESOURCES.ConfigMap, ns, e.valueFrom.configMapKeyRef.name);
        env[e.name] = await this.localize(cm?.data?.[e.valueFrom.configMapKeyRef.key] ?? '');
      } else if (e.value !== undefined) env[e.name] = await this.localize(local(e.value));
    }
    return env;
  }

  private async validatorPod(ns: string, name: string) {
    const sts = await get(this.client, STATEFUL_SET, ns, name);
    if (!sts) throw new Error(`no StatefulSet ${ns}/${name}`);
    const claims = ((sts.spec.volumeClaimTemplates ?? []) as Array<{ metadata: { name: string } }>).map(
      (c) => c.metadata.name,
    );
    return { pod: sts.spec.template.spec as PodSpec, claims, home: join(this.dir, ns, name) };
  }

  /** Starts the validator's node from what the operator created, as its pod would run (a held one again, too). */
  async start(ns: string, name: string): Promise<void> {
    const key = `${ns}/${name}`;
    this.held.delete(key);
    this.podOf.set(key, (await get(this.client, RESOURCES.Pod, ns, `${name}-0`))?.metadata.uid);
    const { pod, claims, home } = await this.validatorPod(ns, name);
    const container = pod.containers[0] as Container;
    mkdirSync(home, { recursive: true });
    const env = await this.envOf(ns, container, await this.mountVolumes(ns, pod, container, home, claims));
    env.NODE_CONSENSUS__BIND_HOST = '127.0.0.1';
    env.NODE_CONSENSUS__BIND_PORT = String(await this.portOf(ns, name));
    env.NODE_PEERS__ANNOUNCE_INTERVAL_MS = '1000';
    env.NODE_SYNC__INTERVAL_MS = '500';
    Object.assign(env, this.env);
    const child = spawn(process.execPath, ['--import', SVC_DNS, MAIN, ...container.args], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(home, 'node.log'), { flags: 'a' });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    this.nodes.set(key, child);
    // A started container is not Ready until its readiness probe (the pod spec's) first succeeds.
    const scheme = (container.readinessProbe?.httpGet?.scheme ?? 'HTTP').toLowerCase();
    this.probes.set(key, {
      probe: { ...PROBE_DEFAULTS, ...container.readinessProbe },
      ready: false,
      failures: 0,
      scheme,
    });
  }

  /**
   * The container exits, unready at once: `crash` (SIGKILL), or `graceful` as a kubelet stops a deleted pod's
   * (SIGTERM, then SIGKILL if it still runs after Kubernetes' default grace period, 30 s; the node exits within 10 s
   * of its own). Resolves once the process is gone: a new one on the same data folder never starts before.
   */
  private async kill(ns: string, name: string, how: 'crash' | 'graceful' = 'crash'): Promise<void> {
    const key = `${ns}/${name}`;
    const child = this.nodes.get(key);
    this.nodes.delete(key);
    const state = this.probes.get(key);
    if (state) state.ready = false;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(how === 'crash' ? 'SIGKILL' : 'SIGTERM');
    const force = how === 'graceful' ? setTimeout(() => child.kill('SIGKILL'), 30_000) : undefined;
    await exited;
    clearTimeout(force);
  }

  /** Stops a validator's node (SIGKILL), which stays down, unready, until `start` (as a machine that went away). */
  async stop(ns: string, name: string): Promise<void> {
    this.held.add(`${ns}/${name}`);
    await this.kill(ns, name);
  }

  running(ns: string, name: string): boolean {
    return this.nodes.has(`${ns}/${name}`);
  }

  async stopAll(): Promise<void> {
    for (const key of [...this.nodes.keys()]) {
      const [ns, name] = key.split('/') as [string, string];
      await this.stop(ns, name);
    }
    await this.agent.close();
  }

  /** GET a path of a validator's API (the probes' trust: every CA given); undefined when it does not answer 200. */
  async getJson<T>(ns: string, name: string, path: string, tls = true): Promise<T | undefined> {
    try {
      const res = await request(`${await this.url(ns, name, tls)}${path}`, {
        dispatcher: this.agent,
        headersTimeout: 5000,
        bodyTimeout: 5000,
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        return undefined;
      }
      return (await res.body.json()) as T;
    } catch {
      return undefined;
    }
  }

  /** GET /ready of a running validator, bounded as its probe is. */
  async nodeReady(ns: string, name: string): Promise<boolean> {
    const state = this.probes.get(`${ns}/${name}`);
    if (!state || !this.nodes.has(`${ns}/${name}`)) return false;
    try {
      const res = await request(`${await this.url(ns, name, state.scheme === 'https')}/ready`, {
        dispatcher: this.agent,
        headersTimeout: state.probe.timeoutSeconds * 1000,
        bodyTimeout: state.probe.timeoutSeconds * 1000,
      });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  /** One readiness probe, counted as a kubelet counts failures; the pod's Ready condition follows it. */
  async syncReady(ns: string, name: string): Promise<boolean> {
    const ok = await this.nodeReady(ns, name);
    const state = this.probes.get(`${ns}/${name}`);
    let ready = ok;
    if (state) {
      if (!this.nodes.has(`${ns}/${name}`)) state.ready = false;
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
      ready = state.ready;
    }
    const now = rfc3339(new Date());
    const status = ready ? 'True' : 'False';
    await this.client
      .request('PATCH', resourcePath(RESOURCES.Pod, ns, `${name}-0`, 'status'), {
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
   * One turn of the kubelet over a namespace: a pod being deleted goes (and a validator whose StatefulSet is gone is
   * stopped); a new pod (a first start, or a rollout's replacement) runs its init containers, then starts its node
   * anew from the current pod spec, unless the test holds it stopped or an init container failed; every pod reports
   * its readiness. A pod that is not bound to a node (none is, on the test control plane) is deleted at once,
   * without a deletionTimestamp ever being seen: its replacement is recognised by its new uid.
   */
  async play(ns: string, cluster = 'ledger'): Promise<void> {
    const pods = await list(this.client, RESOURCES.Pod, ns, `scriptorium.dev/ledger-cluster=${cluster}`);
    for (const pod of pods) {
      if (!pod.metadata.deletionTimestamp) continue;
      await this.client
        .request('DELETE', resourcePath(RESOURCES.Pod, ns, pod.metadata.name), { body: { gracePeriodSeconds: 0 } })
        .catch(() => undefined);
      const state = this.probes.get(`${ns}/${(pod.metadata.name ?? '').replace(/-0$/, '')}`);
      if (state) Object.assign(state, { ready: false, failures: 0, failingSince: undefined });
    }
    const sets = (await list(this.client, STATEFUL_SET, ns, `scriptorium.dev/ledger-cluster=${cluster}`)).map(
      (s: KubeObject) => s.metadata.name as string,
    );
    for (const key of [...this.nodes.keys()]) {
      const [n, name] = key.split('/') as [string, string];
      if (n === ns && !sets.includes(name)) await this.kill(ns, name, 'graceful');
    }
    const present: string[] = [];
    for (const name of sets) {
      const pod = pods.find((p) => p.metadata.name === `${name}-0` && !p.metadata.deletionTimestamp);
      if (!pod) continue;
      present.push(name);
      const key = `${ns}/${name}`;
      if (this.held.has(key) || this.podOf.get(key) === pod.metadata.uid) continue;
      // A replaced pod (a rollout, a key rotation's restart): the old container stops as a kubelet stops it.
      await this.kill(ns, name, 'graceful');
      if (await this.runInitContainers(ns, name)) await this.start(ns, name);
      else this.podOf.set(key, pod.metadata.uid);
    }
    await Promise.all(present.map((s) => this.syncReady(ns, s)));
  }

  /**
   * Runs one container of a pod to its end, as `ledger-node <args>` with the container's environment and files;
   * its exit code and termination message.
   */
  async runContainer(ns: string, pod: PodSpec, container: Container, home: string, claims: string[] = []) {
    mkdirSync(home, { recursive: true });
    const local = await this.mountVolumes(ns, pod, container, home, claims);
    const env = await this.envOf(ns, container, local);
    const startedAt = rfc3339(new Date());
    const exitCode = await new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ['--import', SVC_DNS, MAIN, ...container.args], { env, stdio: 'ignore' });
      child.on('exit', (code) => resolve(code ?? 1));
    });
    const file = local('/dev/termination-log');
    const message = existsSync(file) ? readFileSync(file, 'utf8') : '';
    return { exitCode, message, startedAt, finishedAt: rfc3339(new Date()) } satisfies Terminated;
  }

  /**
   * A validator pod's init containers (the restore of spec.bootstrap.fromBackup), run to their end before its node
   * starts; each one's result goes into the pod's `initContainerStatuses`. False when one failed: the node is not
   * started (a kubelet would retry the init container with a back-off; the test looks at the first failure).
   */
  async runInitContainers(ns: string, name: string): Promise<boolean> {
    const { pod, claims, home } = await this.validatorPod(ns, name);
    const statuses: object[] = [];
    let ok = true;
    for (const init of pod.initContainers ?? []) {
      const t = await this.runContainer(ns, pod, init, home, claims);
      statuses.push(containerStatus(init, t));
      if (t.exitCode !== 0) {
        ok = false;
        break;
      }
    }
    if (statuses.length > 0)
      await this.client.request('PATCH', resourcePath(RESOURCES.Pod, ns, `${name}-0`, 'status'), {
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
  async runJobPods(ns: string, cluster = 'ledger'): Promise<number> {
    let ran = 0;
    for (const kind of ['backup', 'backup-verify']) {
      const pods = await list(
        this.client,
        RESOURCES.Pod,
        ns,
        `scriptorium.dev/ledger-cluster=${cluster},app.kubernetes.io/component=${kind}`,
      );
      for (const pod of pods) {
        if (pod.metadata.deletionTimestamp || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')
          continue;
        const container = pod.spec.containers[0] as Container;
        const home = join(this.dir, ns, 'jobs', pod.metadata.name ?? kind);
        const t = await this.runContainer(ns, pod.spec as PodSpec, container, home);
        await this.client.request('PATCH', resourcePath(RESOURCES.Pod, ns, pod.metadata.name, 'status'), {
          contentType: 'application/merge-patch+json',
          body: {
            status: {
              phase: t.exitCode === 0 ? 'Succeeded' : 'Failed',
              startTime: t.startedAt,
              containerStatuses: [containerStatus(container, t)],
            },
          },
        });
        ran++;
      }
    }
    return ran;
  }
}

function containerStatus(container: Container, t: Terminated): object {
  return {
    name: container.name,
    image: container.image,
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
