import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A child process whose output goes to a log file in the control plane's folder. */
export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  logFile: string;
  /** Resolves when the process has exited (any reason). */
  exited: Promise<number | null>;
}

/** Start `bin` with `args`; stdout and stderr go to `<dir>/<name>.log`; the pid is recorded in `<dir>/pids`. */
export async function startProcess(dir: string, name: string, bin: string, args: string[]): Promise<ManagedProcess> {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', fd, fd], cwd: dir });
  closeSync(fd);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(null));
  });
  if (child.pid !== undefined) await appendFile(join(dir, 'pids'), `${child.pid}\n`);
  return { name, child, logFile, exited };
}

/** The last lines of a process's log, for error messages. */
export async function logTail(process: ManagedProcess, lines = 25): Promise<string> {
  try {
    return (await readFile(process.logFile, 'utf8')).trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** SIGTERM, then SIGKILL after `graceMs`. Resolves once the process is gone. */
export async function stopProcess(process: ManagedProcess, graceMs = 10_000): Promise<void> {
  if (process.child.exitCode !== null || process.child.signalCode !== null) return;
  process.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      process.child.kill('SIGKILL');
      resolve();
    }, graceMs);
  });
  await Promise.race([process.exited, killed]);
  clearTimeout(timer);
  await process.exited;
}

/**
 * Poll `probe` until it returns true, the process exits, or `timeoutMs` passes. Errors name the
 * process and carry the tail of its log.
 */
export async function waitUntil(
  process: ManagedProcess,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void process.exited.then(() => {
    exited = true;
  });
  let lastError = '';
  while (Date.now() < deadline) {
    if (exited) {
      throw new Error(`kube-testenv: ${process.name} exited before ${what}:\n${await logTail(process)}`);
    }
    try {
      if (await probe()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(
    `kube-testenv: ${process.name} not ${what} after ${timeoutMs} ms (last probe error: ${lastError || 'none'}):\n${await logTail(process)}`,
  );
}

/** Prefix of every control plane's temporary folder; used to find leftovers of crashed runs. */
export const DIR_PREFIX = 'scriptorium-kube-';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Remove control planes left behind by a test process that died without calling stop() (killed
 * worker, crash): their owner pid is gone, so kill their recorded children and delete the folder.
 * A recorded pid is only killed when its command line still mentions that folder (pids get reused).
 */
export function reapOrphans(tmp: string): number {
  let reaped = 0;
  for (const entry of readdirSync(tmp)) {
    if (!entry.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmp, entry);
    const ownerFile = join(dir, 'owner.pid');
    if (!existsSync(ownerFile)) continue;
    const owner = Number(readFileSync(ownerFile, 'utf8').trim());
    if (Number.isInteger(owner) && owner > 0 && alive(owner)) continue;
    const pidsFile = join(dir, 'pids');
    const pids = existsSync(pidsFile) ? readFileSync(pidsFile, 'utf8').split('\n').map(Number) : [];
    for (const pid of pids) {
      if (!Number.isInteger(pid) || pid <= 0) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone, or no /proc: nothing to kill
      }
    }
    rmSync(dir, { recursive: true, force: true });
    reaped += 1;
  }
  return reaped;
}
