// Starts a ledger cluster of real node processes on loopback: fresh keys, a genesis file and a
// data dir per node in one folder. Used by `make dev` (src/dev/ledger-node.ts), the multi-process
// tests and the benchmarks. Processes are children of the caller; `stopAll` ends exactly those.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from '@scriptorium/ledger-node';
import { buildGenesis } from '@scriptorium/ledger-protocol';
import { generateKeyPair, type KeyPair } from '@scriptorium/ledger-protocol/keys';
import { freePort } from '@scriptorium/test-support/ports';
import { Agent, request } from 'undici';

/** The ledger node's command-line entry (its package's `./main` export), which every local process runs. */
export const LEDGER_NODE_MAIN = fileURLToPath(import.meta.resolve('@scriptorium/ledger-node/main'));

export interface ClusterTls {
  mode: 'server' | 'mutual';
  caFile: string;
  /** Per node: cert and key files (index → files). */
  certFor(index: number): { certFile: string; keyFile: string };
  /** Client cert for the test/bench client itself (mutual mode). */
  client?: { cert: Buffer; key: Buffer };
  ca: Buffer;
}

export interface LocalClusterOptions {
  /** Validators in genesis. */
  size: number;
  dir?: string;
  token?: string;
  debugApi?: boolean;
  roundTimeoutMs?: number;
  logLevel?: string;
  /** Extra environment for every node. */
  env?: Record<string, string>;
  /** Write node output to `<dir>/node-<i>.log` (default) or inherit the parent's stdio. */
  output?: 'file' | 'inherit';
  tls?: ClusterTls;
  chainId?: string;
}

export interface LocalNode {
  index: number;
  nodeId: string;
  keys: KeyPair;
  port: number;
  url: string;
  dataDir: string;
  process: ChildProcess | undefined;
  peerSpec: string;
}

export class LocalCluster {
  readonly dir: string;
  readonly token: string;
  readonly nodes: LocalNode[] = [];
  readonly genesisFile: string;
  readonly options: LocalClusterOptions;
  readonly dispatcher: Agent;

  private constructor(options: LocalClusterOptions, dir: string, token: string, genesisFile: string) {
    this.options = options;
    this.dir = dir;
    this.token = token;
    this.genesisFile = genesisFile;
    const tls = options.tls;
    this.dispatcher = new Agent({
      connections: 64,
      connect: tls ? { ca: tls.ca, ...(tls.client ? { cert: tls.client.cert, key: tls.client.key } : {}) } : {},
    });
  }

  static async create(options: LocalClusterOptions): Promise<LocalCluster> {
    const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ledger-cluster-'));
    mkdirSync(dir, { recursive: true });
    const token = options.token ?? `dev-token-${generateKeyPair().publicKey.slice(0, 24)}`;
    const keys = Array.from({ length: options.size }, () => generateKeyPair());
    const genesis = buildGenesis(
      keys.map((k) => k.publicKey),
      options.chainId ?? 'scriptorium-local',
      Date.now(),
    );
    const genesisFile = join(dir, 'genesis.json');
    writeFileSync(genesisFile, JSON.stringify(genesis, null, 2));
    const cluster = new LocalCluster(options, dir, token, genesisFile);
    for (const k of keys) await cluster.defineNode(k);
    return cluster;
  }

  private async defineNode(keys: KeyPair): Promise<LocalNode> {
    const index = this.nodes.length;
    const port = await freePort();
    const nodeId = `node-${index}`;
    const dataDir = join(this.dir, nodeId);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(
      join(dataDir, 'key.json'),
      JSON.stringify({ public_key: keys.publicKey, private_key: keys.privateKey }),
      { mode: 0o600 },
    );
    const scheme = this.options.tls ? 'https' : 'http';
    const node: LocalNode = {
      index,
      nodeId,
      keys,
      port,
      url: `${scheme}://127.0.0.1:${port}`,
      dataDir,
      process: undefined,
      peerSpec: `${nodeId}@127.0.0.1:${port}|${keys.publicKey}`,
    };
    this.nodes.push(node);
    return node;
  }

  /** A new node that is not in genesis: it starts as a passive follower. */
  async addNode(): Promise<LocalNode> {
    return this.defineNode(generateKeyPair());
  }

  envFor(node: LocalNode): Record<string, string> {
    // Seed peers: every other node defined so far (discovery fills in the rest).
    const peers = this.nodes.filter((n) => n !== node).map((n) => n.peerSpec);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      NODE_ID: node.nodeId,
      NODE_CONSENSUS__BIND_HOST: '127.0.0.1',
      NODE_CONSENSUS__BIND_PORT: String(node.port),
      NODE_CONSENSUS__ADVERTISE: `127.0.0.1:${node.port}`,
      NODE_CONSENSUS__ROUND_TIMEOUT_MS: String(this.options.roundTimeoutMs ?? 500),
      NODE_KEY_FILE: join(node.dataDir, 'key.json'),
      NODE_GENESIS_FILE: this.genesisFile,
      NODE_DATA_DIR: join(node.dataDir, 'chain'),
      NODE_PEERS: peers.join(','),
      NODE_CLUSTER_TOKEN: this.token,
      NODE_DEBUG_API: this.options.debugApi === false ? 'false' : 'true',
      NODE_PEERS__ANNOUNCE_INTERVAL_MS: '1000',
      NODE_SYNC__INTERVAL_MS: '500',
      LOG_LEVEL: this.options.logLevel ?? 'warn',
      ...this.options.env,
    };
    const tls = this.options.tls;
    if (tls) {
      const files = tls.certFor(node.index);
      env.NODE_TLS__ENABLED = 'true';
      env.NODE_TLS__MODE = tls.mode;
      env.NODE_TLS__CERT_FILE = files.certFile;
      env.NODE_TLS__KEY_FILE = files.keyFile;
      env.NODE_TLS__CA_FILE = tls.caFile;
    }
    return env;
  }

  async start(node: LocalNode, extraEnv: Record<string, string> = {}): Promise<void> {
    if (node.process && node.process.exitCode === null && node.process.signalCode === null) return;
    const output = this.options.output ?? 'file';
    const child = spawn(process.execPath, [...NODE_RUNTIME_FLAGS, LEDGER_NODE_MAIN, 'start'], {
      env: { ...NODE_RUNTIME_ENV, ...this.envFor(node), ...extraEnv },
      stdio: output === 'inherit' ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    if (output === 'file') {
      const log = createWriteStream(join(this.dir, `${node.nodeId}.log`), { flags: 'a' });
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
    }
    node.process = child;
    // If the caller exits without stopping the cluster, take the nodes down with it.
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    await this.waitHealthy(node);
  }

  async startAll(extraEnv: Record<string, string> = {}): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.start(n, extraEnv)));
  }

  async waitHealthy(node: LocalNode, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (node.process && node.process.exitCode !== null)
        throw new Error(
          `${node.nodeId} exited with ${node.process.exitCode} (see ${join(this.dir, `${node.nodeId}.log`)})`,
        );
      try {
        const res = await this.get(node, '/health');
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${node.nodeId} did not become healthy in ${timeoutMs} ms`);
  }

  /** Stops one node: SIGKILL (crash) or SIGTERM (graceful); resolves with its exit code (null when killed). */
  async stop(node: LocalNode, signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<number | null> {
    const child = node.process;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    return exited;
  }

  /** Kills every node; removes the data folder when the cluster made it (a caller's `dir` is kept). */
  async stopAll(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.stop(n, 'SIGKILL')));
    await this.dispatcher.close();
    if (this.options.dir === undefined) rmSync(this.dir, { recursive: true, force: true });
  }

  async get(node: LocalNode, path: string, auth = false): Promise<{ status: number; body: unknown }> {
    const res = await request(`${node.url}${path}`, {
      dispatcher: this.dispatcher,
      headers: auth ? { authorization: `Bearer ${this.token}` } : {},
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
  }

  async post(
    node: LocalNode,
    path: string,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: unknown }> {
    const res = await request(`${node.url}${path}`, {
      method: 'POST',
      dispatcher: this.dispatcher,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text.startsWith('{') ? JSON.parse(text) : text };
  }

  async height(node: LocalNode): Promise<number> {
    const res = await this.get(node, '/chain');
    return (res.body as { height: number }).height;
  }

  /** Polls until `check` is true or the time is up; returns the last value for error messages. */
  async waitFor<T>(
    what: string,
    probe: () => Promise<T>,
    check: (value: T) => boolean,
    timeoutMs = 60_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: T | undefined;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        last = await probe();
        if (check(last)) return last;
      } catch (err) {
        lastError = err;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `timed out waiting for ${what}; last value ${JSON.stringify(last)} ${lastError ? String(lastError) : ''}`,
    );
  }
}
