// Independent transparency-log implementations for the witness tests, built from the Go module proxy by
// tools/tlog/build.sh (cached outside the repository): litewitness (filippo.io/torchwood, a C2SP tlog-witness) and
// note-verify (Go's golang.org/x/mod note and tlog packages). litewitness signs with a key held by an ssh-agent
// (openssh-client) and keeps its logs in SQLite.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { freePort } from '@scriptorium/test-support/ports';

const BUILD = fileURLToPath(new URL('../../../tools/tlog/build.sh', import.meta.url));

let binDir: string | undefined;

/** The folder of litewitness and note-verify: tools/tlog/build.sh builds what is missing (a second or less when cached). */
export function tlogBinDir(): string {
  binDir ??= execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return binDir;
}

/** What note-verify is asked (tools/tlog/note-verify/main.go). */
export interface NoteVerifyRequest {
  note: string;
  log_keys: string[];
  log_quorum: number;
  witness_keys: string[];
  inclusion?: Array<{ index: number; leaf_data: string; proof: string[] }>;
  consistency?: Array<{ from: number; from_root: string; proof: string[] }>;
}

export interface NoteVerifyVerdict {
  ok: boolean;
  origin: string;
  size: number;
  log_signatures: number;
  cosigned: string[];
  errors: string[];
}

/** Runs note-verify on one request: Go's verdict. */
export function noteVerify(request: NoteVerifyRequest): NoteVerifyVerdict {
  try {
    return JSON.parse(
      execFileSync(join(tlogBinDir(), 'note-verify'), { input: JSON.stringify(request), encoding: 'utf8' }),
    ) as NoteVerifyVerdict;
  } catch (err) {
    const out = (err as { stdout?: string }).stdout;
    if (out) return JSON.parse(out) as NoteVerifyVerdict;
    throw err;
  }
}

export interface Litewitness {
  name: string;
  url: string;
  /** Its verifier key, as litewitness itself prints it at start. */
  verifierKey: string;
  /** Its Ed25519 public key (hex), read from the ssh key. */
  publicKey: string;
  /** Stops litewitness (the agent stays: `restart` brings it back on the same port, key and database). */
  stop(): Promise<void>;
  restart(): Promise<void>;
  /** Stops everything and removes its folder. */
  close(): Promise<void>;
}

/**
 * Starts litewitness with a fresh ssh-agent and Ed25519 key in `dir`, following `logs` (each an origin and its
 * note verifier keys; the rows `witnessctl add-log` and `add-key` would write, in litewitness's own schema).
 */
export async function startLitewitness(options: {
  dir: string;
  name: string;
  logs: Array<{ origin: string; keys: string[] }>;
}): Promise<Litewitness> {
  const { dir, name } = options;
  mkdirSync(dir, { recursive: true });
  const bin = join(tlogBinDir(), 'litewitness');
  const sock = join(dir, 'agent.sock');
  const keyFile = join(dir, 'witness-key');
  const db = join(dir, 'litewitness.db');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', keyFile]);
  const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
  const reapAgent = () => agent.kill('SIGKILL');
  process.once('exit', reapAgent);
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      execFileSync('ssh-add', [keyFile], { env: { ...process.env, SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const fingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyFile}.pub`], {
    encoding: 'utf8',
  }).split(' ')[1] as string;
  const blob = Buffer.from(readFileSync(`${keyFile}.pub`, 'utf8').split(' ')[1] as string, 'base64');
  const publicKey = blob.subarray(blob.length - 32).toString('hex');
  // witnessctl add-log and add-key: a log at size 0 with the empty tree's root, and its keys.
  const sql = new DatabaseSync(db);
  sql.exec(`
    CREATE TABLE IF NOT EXISTS log (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, tree_hash TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS key (origin TEXT NOT NULL, key TEXT NOT NULL, FOREIGN KEY(origin) REFERENCES log(origin));
  `);
  const empty = Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex').toString(
    'base64',
  );
  for (const log of options.logs) {
    sql.prepare('INSERT INTO log (origin, tree_size, tree_hash) VALUES (?, 0, ?)').run(log.origin, empty);
    for (const key of log.keys) sql.prepare('INSERT INTO key (origin, key) VALUES (?, ?)').run(log.origin, key);
  }
  sql.close();
  const port = await freePort();
  let child: ChildProcess | undefined;
  let verifierKey = '';
  const start = async () => {
    const out = createWriteStream(join(dir, 'litewitness.log'), { flags: 'a' });
    const started = spawn(
      bin,
      ['-name', name, '-db', db, '-ssh-agent', sock, '-key', fingerprint, '-listen', `127.0.0.1:${port}`],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = started;
    const reap = () => started.kill('SIGKILL');
    process.once('exit', reap);
    started.once('exit', () => process.off('exit', reap));
    let text = '';
    started.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      out.write(chunk);
    });
    started.stdout?.pipe(out);
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      if (started.exitCode !== null)
        throw new Error(`litewitness exited with ${started.exitCode}: ${text.slice(-500)}`);
      const match = /vkey=(\S+)/.exec(text);
      if (match?.[1] && /msg=listening/.test(text)) {
        verifierKey = match[1];
        try {
          await fetch(`http://127.0.0.1:${port}/`);
          return;
        } catch {
          // not accepting yet
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`litewitness did not start: ${text.slice(-500)}`);
  };
  const stop = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    get verifierKey() {
      return verifierKey;
    },
    publicKey,
    stop,
    restart: start,
    async close() {
      await stop();
      agent.kill('SIGKILL');
      process.off('exit', reapAgent);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
