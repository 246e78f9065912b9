// The kubelet's part for LedgerCluster validators on a test control plane (which has no kubelet): for each validator
// StatefulSet the operator made, start `ledger-node start` as its pod would run it — the pod's own environment, its
// Secret and ConfigMap volumes written to files (only the listed keys where a volume lists them), Service names kept
// (fixtures/svc-dns.ts resolves them to loopback) with each validator on a port of its own — and report the pod Ready
// exactly as a kubelet would from the pod's readiness probe. Several namespaces (organizations) at once.
// This process resolves the Service names too (its probes, and an operator in this process calling the nodes).
import './fixtures/svc-dns.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
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

interface Volume {
  name: string;
  secret?: { secretName: string; items?: Array<{ key: string; path: string }> };
  configMap?: { name: string; items?: Array<{ key: string; path: string }> };
}

const decode = (data: string) => Buffer.from(data, 'base64').toString('utf8');

export class LedgerKubelet {
  private readonly client: KubeClient;
  private readonly dir: string;
  private readonly env: Record<string, string>;
  private readonly ports = new Map<string, number>();
  private readonly nodes = new Map<string, ChildProcess>();
  /** The pod each running node stands for (a new pod, after a rollout, restarts it). */
  private readonly podOf = new Map<string, string>();
  private readonly probes = new Map<
    string,
    { probe: Probe; ready: boolean; failures: number; failingSince?: number; scheme: string }
  >();
  private readonly agent: Agent;

  /** `ca`: every CA a node's certificate may come from (the probes verify them); `env`: added to every node. */
  constructor(client: KubeClient, dir: string, options: { ca?: string; env?: Record<string, string> } = {}) {
    this.client = client;
    this.dir = dir;
    this.env = options.env ?? {};
    this.agent = new Agent({ connect: options.ca ? { ca: options.ca } : {} });
  }

  private async portOf(ns: string, name: string): Promise<number> {
    const key = `${ns}/${name}`;
    let port = this.ports.get(key);
    if (port === undefined) {
      port = await freePort();
      this.ports.set(key, port);
    }
    return port;
  }

  /** The URL a validator answers at, once it has a port (else one nothing listens on): what the operator calls. */
  knownUrl(ns: string, name: string, tls: boolean): string {
    return `${tls ? 'https' : 'http'}://${name}.${ns}.svc:${this.ports.get(`${ns}/${name}`) ?? 1}`;
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

  /** Starts the validator's node from what the operator created, as its pod would run. */
  async start(ns: string, name: string): Promise<void> {
    const sts = await get(this.client, STATEFUL_SET, ns, name);
    if (!sts) throw new Error(`no StatefulSet ${ns}/${name}`);
    const pod = sts.spec.template.spec;
    const container = pod.containers[0];
    const home = join(this.dir, ns, name);
    mkdirSync(home, { recursive: true });
    const mountOf = new Map(
      (container.volumeMounts as Array<{ name: string; mountPath: string }>).map((m) => [m.name, m.mountPath]),
    );
    const paths = new Map<string, string>();
    // The volume claim templates (the node's data): a folder of its own that outlives the process, as a PVC does.
    for (const claim of (sts.spec.volumeClaimTemplates ?? []) as Array<{ metadata: { name: string } }>) {
      const mount = mountOf.get(claim.metadata.name);
      if (!mount) continue;
      const folder = join(home, claim.metadata.name);
      mkdirSync(folder, { recursive: true });
      paths.set(mount, folder);
    }
    for (const v of pod.volumes as Volume[]) {
      const mount = mountOf.get(v.name);
      if (!mount) continue;
      const folder = join(home, v.name);
      mkdirSync(folder, { recursive: true });
      paths.set(mount, folder);
      if (!v.secret && !v.configMap) continue;
      const source = v.secret
        ? await get(this.client, RESOURCES.Secret, ns, v.secret.secretName)
        : await get(this.client, RESOURCES.ConfigMap, ns, v.configMap?.name ?? '');
      const data: Record<string, string> = {};
      for (const [k, value] of Object.entries((source?.data ?? {}) as Record<string, string>))
        data[k] = v.secret ? decode(value) : value;
      const items = (v.secret ?? v.configMap)?.items ?? Object.keys(data).map((k) => ({ key: k, path: k }));
      for (const item of items) writeFileSync(join(folder, item.path), data[item.key] ?? '', { mode: 0o600 });
    }
    const file = (value: string) => {
      for (const [mount, folder] of paths)
        if (value.startsWith(`${mount}/`) || value === mount) return folder + value.slice(mount.length);
      // A path under no mount would be this machine's own: refuse rather than write there.
      if (value.startsWith('/etc/') || value.startsWith('/var/'))
        throw new Error(`${ns}/${name}: ${value} is under no volume`);
      return value;
    };
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' };
    for (const e of container.env as Array<{
      name: string;
      value?: string;
      valueFrom?: { configMapKeyRef?: { name: string; key: string } };
    }>) {
      if (e.valueFrom?.configMapKeyRef) {
        const cm = await get(this.client, RESOURCES.ConfigMap, ns, e.valueFrom.configMapKeyRef.name);
        env[e.name] = await this.localize(cm?.data?.[e.valueFrom.configMapKeyRef.key] ?? '');
      } else if (e.value !== undefined) env[e.name] = await this.localize(file(e.value));
    }
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
    this.nodes.set(`${ns}/${name}`, child);
    // A started container is not Ready until its readiness probe (the pod spec's) first succeeds.
    const scheme = (container.readinessProbe?.httpGet?.scheme ?? 'HTTP').toLowerCase();
    this.probes.set(`${ns}/${name}`, {
      probe: { ...PROBE_DEFAULTS, ...container.readinessProbe },
      ready: false,
      failures: 0,
      scheme,
    });
  }

  /** The container exits (SIGKILL: a crash); it is unready at once. Resolves once the process is gone. */
  async stop(ns: string, name: string): Promise<void> {
    const key = `${ns}/${name}`;
    const child = this.nodes.get(key);
    this.nodes.delete(key);
    const state = this.probes.get(key);
    if (state) state.ready = false;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    // A new process on the same data folder must never start before the old one is gone.
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
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
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
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
   * stopped), a new pod (a first start, or a rollout's replacement) starts its node anew from the current pod spec,
   * and every running one reports its readiness.
   */
  async play(ns: string, cluster: string): Promise<void> {
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
      if (n === ns && !sets.includes(name)) await this.stop(ns, name);
    }
    for (const name of sets) {
      const pod = pods.find((p) => p.metadata.name === `${name}-0` && !p.metadata.deletionTimestamp);
      if (!pod) continue;
      const key = `${ns}/${name}`;
      if (this.running(ns, name) && this.podOf.get(key) === pod.metadata.uid) continue;
      await this.stop(ns, name);
      await this.start(ns, name);
      this.podOf.set(key, pod.metadata.uid as string);
    }
    await Promise.all(sets.filter((s) => this.running(ns, s)).map((s) => this.syncReady(ns, s)));
  }
}
