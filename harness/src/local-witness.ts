// Starts `ledger-node witness` processes on loopback: a key and a state file in a folder, the logs it follows.
// Used by `make dev` (two witnesses), the witnessing tests and the benchmark. Processes are children of the caller.
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ALG_COSIGNATURE_V1, formatVerifierKey, logVerifierKey, type WitnessLog } from '@scriptorium/ledger-protocol';
import { generateKeyPair, type KeyPair, keyFileContent } from '@scriptorium/ledger-protocol/keys';
import { freePort } from '@scriptorium/test-support/ports';
import { LEDGER_NODE_MAIN } from './local-cluster.ts';

export interface LocalWitnessOptions {
  /** The witness's key name, e.g. witness.test/w1. */
  name: string;
  /** A folder of its own (key, state, log). */
  dir: string;
  logs: WitnessLog[];
  port?: number;
  logLevel?: string;
}

/** A log as a witness is told about it: the origin and each validator's note key, quorum by default. */
export function witnessLogOf(origin: string, validators: readonly string[], quorum?: number): WitnessLog {
  return {
    origin,
    keys: validators.map((v) => logVerifierKey(origin, v).text),
    ...(quorum !== undefined ? { quorum } : {}),
  };
}

export class LocalWitness {
  readonly name: string;
  readonly dir: string;
  readonly keys: KeyPair;
  readonly port: number;
  readonly url: string;
  /** Its tlog-cosignature verifier key (what a reader's policy names). */
  readonly verifierKey: string;
  readonly stateFile: string;
  private readonly options: LocalWitnessOptions;
  process: ChildProcess | undefined;

  private constructor(options: LocalWitnessOptions, keys: KeyPair, port: number) {
    this.options = options;
    this.name = options.name;
    this.dir = options.dir;
    this.keys = keys;
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.verifierKey = formatVerifierKey(options.name, ALG_COSIGNATURE_V1, keys.publicKey);
    this.stateFile = join(options.dir, 'state.json');
  }

  /** A witness with a fresh key (or the one already in `dir`), started and healthy. */
  static async start(options: LocalWitnessOptions): Promise<LocalWitness> {
    mkdirSync(options.dir, { recursive: true });
    const keyFile = join(options.dir, 'key.json');
    let keys: KeyPair;
    try {
      const k = JSON.parse(readFileSync(keyFile, 'utf8')) as { public_key: string; private_key: string };
      keys = { publicKey: k.public_key, privateKey: k.private_key };
    } catch {
      keys = generateKeyPair();
      writeFileSync(keyFile, keyFileContent(keys), { mode: 0o600 });
    }
    const witness = new LocalWitness(options, keys, options.port ?? (await freePort()));
    await witness.restart();
    return witness;
  }

  /** The witness's endpoint entry for NODE_WITNESS__WITNESSES. */
  endpoint(name = this.name.replace(/[^A-Za-z0-9._-]/g, '-')): { name: string; url: string; key: string } {
    return { name, url: this.url, key: this.verifierKey };
  }

  /** (Re)starts the process on the same port, key and state; resolves when /health answers. */
  async restart(): Promise<void> {
    if (this.running) return;
    const child = spawn(process.execPath, [LEDGER_NODE_MAIN, 'witness'], {
      env: {
        PATH: process.env.PATH ?? '',
        WITNESS_NAME: this.name,
        WITNESS_KEY_FILE: join(this.dir, 'key.json'),
        WITNESS_STATE_FILE: this.stateFile,
        WITNESS_BIND_HOST: '127.0.0.1',
        WITNESS_BIND_PORT: String(this.port),
        WITNESS_LOGS: JSON.stringify(this.options.logs),
        LOG_LEVEL: this.options.logLevel ?? 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const log = createWriteStream(join(this.dir, 'witness.log'), { flags: 'a' });
    child.stdout.pipe(log);
    child.stderr.pipe(log);
    this.process = child;
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.off('exit', reap));
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null)
        throw new Error(`witness ${this.name} exited with ${child.exitCode} (see ${join(this.dir, 'witness.log')})`);
      try {
        if ((await fetch(`${this.url}/health`)).status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`witness ${this.name} did not answer /health`);
  }

  get running(): boolean {
    return this.process !== undefined && this.process.exitCode === null && this.process.signalCode === null;
  }

  /** Stops it (SIGKILL: a crash; SIGTERM: a clean stop). */
  async stop(signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const child = this.process;
    if (!child || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  /** GET /: the witness's name, key and the heads it cosigned. */
  async info(): Promise<{
    name: string;
    verifier_key: string;
    logs: Array<{ origin: string; size: number; root: string }>;
    conflicts: number;
  }> {
    return (await (await fetch(`${this.url}/`)).json()) as never;
  }
}
