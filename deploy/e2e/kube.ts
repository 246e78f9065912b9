// The suite's hands on a cluster: the real kubectl and helm (no client library), bounded waits, port-forwards.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { E2eConfig } from './config.ts';

export interface RunOptions {
  /** Written to the command's stdin (e.g. a manifest for `apply -f -`). */
  input?: string;
  timeoutMs?: number;
}

export class CommandError extends Error {
  readonly stderr: string;
  constructor(message: string, stderr: string) {
    super(message);
    this.stderr = stderr;
  }
}

/**
 * The bound a command sets itself (`--timeout=300s`, helm's `--timeout 180s`), in ms; undefined when it sets none.
 * The process is killed only well after it: killed first, a `rollout status --timeout=300s` failed at the default
 * bound with no word of why.
 */
export function ownTimeoutMs(args: readonly string[]): number | undefined {
  for (let i = 0; i < args.length; i++) {
    const value = args[i]?.startsWith('--timeout=') ? args[i]?.slice('--timeout='.length) : undefined;
    const given = value ?? (args[i] === '--timeout' ? args[i + 1] : undefined);
    const m = given === undefined ? null : /^(\d+)(s|m)$/.exec(given);
    if (m) return Number(m[1]) * (m[2] === 'm' ? 60_000 : 1000);
  }
  return undefined;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, options: RunOptions = {}): Promise<string> {
  const own = ownTimeoutMs(args);
  const timeout = options.timeoutMs ?? (own === undefined ? 120_000 : own + 30_000);
  return new Promise((resolvePromise, reject) => {
    const child = execFile(
      file,
      args,
      { env, timeout, maxBuffer: 32 * 1024 * 1024, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        if (err) {
          // The command line names no secret: secrets are passed through stdin or read inside pods.
          const what = `${file.split('/').pop()} ${args.join(' ')}`.slice(0, 300);
          reject(new CommandError(`${what}: ${stderr.trim() || err.message}`, stderr));
        } else {
          resolvePromise(stdout);
        }
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export interface Kube {
  kubectl(args: string[], options?: RunOptions): Promise<string>;
  /** `kubectl get … -o json`, parsed. */
  getJson<T = KubeObject>(args: string[]): Promise<T>;
  helm(args: string[], options?: RunOptions): Promise<string>;
}

export interface KubeObject {
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}
export interface KubeList<T = KubeObject> {
  items: T[];
}

export function kube(config: E2eConfig): Kube {
  const env = { ...process.env, KUBECONFIG: config.kubeconfig };
  const kubectl = (args: string[], options?: RunOptions) => run(config.kubectl, args, env, options);
  return {
    kubectl,
    async getJson<T>(args: string[]) {
      return JSON.parse(await kubectl(['get', ...args, '-o', 'json'])) as T;
    },
    helm: (args, options) => run(config.helm, args, env, { timeoutMs: 600_000, ...options }),
  };
}

/** A wait at least this long is reported on stderr (the CI log), with what it waited for. */
const WAIT_REPORTED_MS = 3000;

/**
 * Retries `check` until it returns a value other than undefined, at most `timeoutMs`; the last error or
 * the last `describe()` goes into the failure message.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  { timeoutMs, intervalMs = 2000, describe }: { timeoutMs: number; intervalMs?: number; describe?: () => string },
): Promise<T> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last = '';
  for (let attempt = 0; attempt < 10_000; attempt++) {
    try {
      const value = await check();
      if (value !== undefined) {
        // Where a journey's time goes, in the CI log: every wait that took a while, with its length.
        const took = Date.now() - started;
        if (took >= WAIT_REPORTED_MS) process.stderr.write(`e2e: ${(took / 1000).toFixed(1)} s waiting for ${what}\n`);
        return value;
      }
      last = describe?.() ?? '';
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() + intervalMs > deadline) break;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${last ? `: ${last}` : ''}`);
}

export interface PortForward {
  port: number;
  close(): void;
  /** Whether kubectl still runs (it exits when the pod goes). */
  alive(): boolean;
}

/** `kubectl port-forward TARGET :REMOTE` on 127.0.0.1; resolves with the local port kubectl chose. */
export function portForward(
  config: E2eConfig,
  namespace: string,
  target: string,
  remote: number,
): Promise<PortForward> {
  const child: ChildProcess = spawn(
    config.kubectl,
    ['-n', namespace, 'port-forward', '--address', '127.0.0.1', target, `:${remote}`],
    { env: { ...process.env, KUBECONFIG: config.kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const close = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  return new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      close();
      reject(new Error(`port-forward ${target}: no local port after 30 s (${err.trim()})`));
    }, 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolvePromise({
          port: Number(match[1]),
          close,
          alive: () => child.exitCode === null && child.signalCode === null,
        });
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`port-forward ${target} exited (${code}): ${err.trim()}`));
    });
  });
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json<T = unknown>(): T;
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  tls?: { ca: string; servername: string };
  timeoutMs?: number;
}

/** One HTTP(S) request to 127.0.0.1:port, bounded in time. For HTTPS, `tls` names the CA and the server name. */
export function http(port: number, path: string, options: HttpOptions = {}): Promise<HttpAnswer> {
  return send('127.0.0.1', port, path, options);
}

/**
 * One request through the cluster's ingress controller, as a client whose DNS resolves every Ingress host to the
 * controller would send it: to the controller's address (E2E_INGRESS), with the URL's host in the Host header.
 * Give it the URL as the service names it (`http://<spec.ingress.host>/readyz`, a redirect's Location): only
 * http URLs (the controller's `web` entry point). Redirects are not followed: the caller reads Location and sends
 * the next request, as a browser would, through the ingress again.
 */
export function viaIngress(
  ingress: { host: string; port: number },
  url: string | URL,
  options: Omit<HttpOptions, 'tls'> = {},
): Promise<HttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:') throw new Error(`viaIngress: only http URLs, got ${target.href}`);
  return send(ingress.host, ingress.port, `${target.pathname}${target.search}`, {
    ...options,
    headers: { ...options.headers, host: target.host },
  });
}

function send(host: string, port: number, path: string, options: HttpOptions): Promise<HttpAnswer> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const request = options.tls ? httpsRequest : httpRequest;
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host,
        port,
        path,
        method: options.method ?? 'GET',
        headers,
        timeout: options.timeoutMs ?? 15_000,
        ...(options.tls ? { ca: options.tls.ca, servername: options.tls.servername } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method ?? 'GET'} ${path}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** A condition of an object's status (`conditions[type]`), or undefined. */
export function condition(
  obj: KubeObject,
  type: string,
): { status: string; reason?: string; message?: string } | undefined {
  const conditions = (obj.status?.conditions ?? []) as { type: string; status: string; reason?: string }[];
  return conditions.find((c) => c.type === type);
}

interface PodState {
  metadata: { name: string; deletionTimestamp?: string };
  status: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      restartCount: number;
      state?: Record<string, { reason?: string; message?: string; exitCode?: number }>;
      lastState?: Record<string, { reason?: string; exitCode?: number }>;
    }[];
  };
}

/** One line per pod: its phase, each container's state and restarts, and the message of each unmet condition. */
export function podStates(pods: readonly PodState[]): string {
  return pods
    .map((pod) => {
      const parts = [pod.status.phase ?? 'no phase'];
      if (pod.metadata.deletionTimestamp) parts.push('terminating');
      for (const c of pod.status.containerStatuses ?? []) {
        const [state, detail] = Object.entries(c.state ?? {})[0] ?? ['unknown', {}];
        const why = detail.reason ?? (detail.exitCode === undefined ? '' : `exit ${detail.exitCode}`);
        const last = Object.entries(c.lastState ?? {})[0];
        parts.push(
          `${c.name} ${state}${why ? ` ${why}` : ''}${c.ready ? ' ready' : ''}` +
            (c.restartCount > 0
              ? `, ${c.restartCount} restarts${last ? ` (last ${last[1].reason ?? last[0]})` : ''}`
              : ''),
        );
      }
      for (const cond of pod.status.conditions ?? [])
        if (cond.status !== 'True' && cond.message) parts.push(`${cond.type}: ${cond.message.slice(0, 160)}`);
      return `${pod.metadata.name}: ${parts.join('; ')}`;
    })
    .join(' | ');
}

/**
 * `kubectl rollout status TARGET` (`deployment/x`, `statefulset/y`) for at most `timeoutMs`. A failure says what held
 * the rollout: each of the target's pods, its phase, containers and unmet conditions (the failure line is often all
 * a CI summary keeps).
 */
export async function rolloutStatus(k: Kube, ns: string, target: string, timeoutMs: number): Promise<void> {
  try {
    await k.kubectl(['-n', ns, 'rollout', 'status', target, `--timeout=${Math.ceil(timeoutMs / 1000)}s`]);
  } catch (err) {
    const pods = await k
      .getJson<{ spec: { selector: { matchLabels?: Record<string, string> } } }>(['-n', ns, target])
      .then((o) => Object.entries(o.spec.selector.matchLabels ?? {}).map(([key, v]) => `${key}=${v}`))
      .then((labels) => k.getJson<KubeList<PodState>>(['-n', ns, 'pods', '-l', labels.join(',')]))
      .then((list) => podStates(list.items))
      .catch((e: Error) => `(its pods not read: ${e.message})`);
    throw new Error(`${err instanceof Error ? err.message : String(err)}; its pods: ${pods || 'none'}`);
  }
}
