// A CometBFT localnet on loopback for bench/peers: `cometbft testnet` writes 4 validators' homes, each node gets its
// own P2P and RPC ports on 127.0.0.1, and runs `cometbft node --proxy_app=kvstore` (the built-in key-value app, in
// process) as a child of the bench. Settings: COMET_SETTINGS (every change to the generated config.toml, and why).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support/ports';

/** config.toml changes per setting: [section, key, TOML value, why]. Both settings get `common`. */
const common: [string, string, string, string][] = [
  // The bench loads both chains with the same batches (250–500 records a request); the RPC's default cap of
  // 10 calls per JSON-RPC batch would make the load generator, not the chain, the limit.
  [
    'rpc',
    'max_request_batch_size',
    '1000',
    'a JSON-RPC batch carries as many txs as our POST /mempool carries records',
  ],
  // Our validators run with a 500,000-record mempool in the bench; 5,000 txs would refuse load at 5,000/s offered
  // with 1 s blocks (the docs: size and max_txs_bytes are the mempool's knobs; max_txs_bytes stays 1 GB).
  ['mempool', 'size', '500000', "the same bound as our validators' mempool in the bench (default 5,000)"],
  // Our validators log at warn in the bench; info writes a few lines a block.
  ['', 'log_level', '"error"', 'our validators log at warn in the bench (default info)'],
];

/** The two CometBFT settings: its defaults, and a 100 ms commit timeout with its docs' private-network tuning. */
export const COMET_SETTINGS = {
  default: common,
  fast: [
    ...common,
    [
      'consensus',
      'timeout_commit',
      '"100ms"',
      'the docs: lower it for faster consensus when there are no economics on the line (default 1s)',
    ],
    // "Running in production", Configuration parameters: on a private high-speed network, lower the flush throttle
    // timeout and raise the others; these are the values it gives.
    ['p2p', 'flush_throttle_timeout', '"10ms"', 'running-in-production: private high-speed network (default 100ms)'],
    ['p2p', 'max_packet_msg_payload_size', '10240', 'running-in-production: private high-speed network (default 1024)'],
    ['p2p', 'send_rate', '20000000', 'running-in-production: private high-speed network (default 5120000)'],
    ['p2p', 'recv_rate', '20000000', 'running-in-production: private high-speed network (default 5120000)'],
    // kvstore's txs never become invalid after a block (the docs: disable it if that does not apply to your app).
    ['mempool', 'recheck', 'false', 'running-in-production: no recheck for an app whose txs stay valid (default true)'],
  ],
} satisfies Record<string, [string, string, string, string][]>;

export type CometSetting = keyof typeof COMET_SETTINGS;

/** Sets `key = value` in `[section]` ('' for the top-level keys) of a config.toml text. */
export function setToml(text: string, section: string, key: string, value: string): string {
  const lines = text.split('\n');
  let current = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const header = /^\[([^\]]+)\]\s*$/.exec(line);
    if (header) current = header[1] as string;
    else if (current === section && new RegExp(`^${key}\\s*=`).test(line)) {
      lines[i] = `${key} = ${value}`;
      return lines.join('\n');
    }
  }
  throw new Error(`config.toml has no ${key} in [${section}]`);
}

export interface CometNode {
  index: number;
  rpcUrl: string;
  process: ChildProcess;
}

export interface CometLocalnet {
  dir: string;
  nodes: CometNode[];
  stop(): Promise<void>;
}

async function rpc<T>(url: string, path: string): Promise<T> {
  const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (!body.result) throw new Error(`${path}: ${JSON.stringify(body.error)}`);
  return body.result;
}

export const cometHeight = async (url: string) =>
  Number((await rpc<{ sync_info: { latest_block_height: string } }>(url, '/status')).sync_info.latest_block_height);

/** Writes and starts a 4-validator localnet with `setting`, and waits until every node has 3 blocks more. */
export async function startCometLocalnet(bin: string, setting: CometSetting, size = 4): Promise<CometLocalnet> {
  const dir = mkdtempSync(join(tmpdir(), 'cometbft-localnet-'));
  execFileSync(bin, ['testnet', '--v', String(size), '--o', dir, '--starting-ip-address', '127.0.0.1'], {
    stdio: 'ignore',
  });
  const homes = Array.from({ length: size }, (_, i) => join(dir, `node${i}`));
  // testnet names the peers ID@127.0.0.<i+1>:26656; each node gets ports of its own on 127.0.0.1 instead.
  const generated = /persistent_peers = "([^"]*)"/.exec(readFileSync(join(homes[0]!, 'config/config.toml'), 'utf8'));
  const ids = generated![1]!.split(',').map((p) => p.split('@')[0]!);
  const p2p = await Promise.all(homes.map(() => freePort()));
  const rpcPorts = await Promise.all(homes.map(() => freePort()));
  const peers = ids.map((id, i) => `${id}@127.0.0.1:${p2p[i]}`);
  homes.forEach((home, i) => {
    const file = join(home, 'config/config.toml');
    let text = readFileSync(file, 'utf8');
    text = setToml(text, 'p2p', 'laddr', `"tcp://127.0.0.1:${p2p[i]}"`);
    text = setToml(text, 'rpc', 'laddr', `"tcp://127.0.0.1:${rpcPorts[i]}"`);
    text = setToml(text, 'p2p', 'persistent_peers', `"${peers.filter((_, j) => j !== i).join(',')}"`);
    text = setToml(text, '', 'proxy_app', '"kvstore"');
    for (const [section, key, value] of COMET_SETTINGS[setting]) text = setToml(text, section, key, value);
    writeFileSync(file, text);
  });
  const nodes: CometNode[] = homes.map((home, index) => {
    const child = spawn(bin, ['node', '--home', home, '--proxy_app=kvstore'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const log = createWriteStream(join(dir, `node${index}.log`));
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    return { index, rpcUrl: `http://127.0.0.1:${rpcPorts[index]}`, process: child };
  });
  const stop = async () => {
    await Promise.all(
      nodes.map(({ process: p }) =>
        p.exitCode !== null || p.signalCode !== null
          ? undefined
          : new Promise((resolve) => {
              p.once('exit', resolve);
              p.kill('SIGKILL');
            }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Warm up as our cluster does: every node 3 blocks past the highest height seen once all answer.
    const deadline = Date.now() + 120_000;
    const heightOrZero = (n: CometNode) => cometHeight(n.rpcUrl).catch(() => -1);
    let heights = await Promise.all(nodes.map(heightOrZero));
    while (heights.some((h) => h < 0)) {
      if (Date.now() > deadline) throw new Error(`cometbft nodes did not answer (logs in ${dir})`);
      if (nodes.some((n) => n.process.exitCode !== null)) throw new Error(`a cometbft node exited (logs in ${dir})`);
      await new Promise((r) => setTimeout(r, 200));
      heights = await Promise.all(nodes.map(heightOrZero));
    }
    const warm = Math.max(...heights) + 3;
    while ((await Promise.all(nodes.map(heightOrZero))).some((h) => h < warm)) {
      if (Date.now() > deadline) throw new Error(`cometbft localnet did not reach height ${warm} (logs in ${dir})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { dir, nodes, stop };
}
