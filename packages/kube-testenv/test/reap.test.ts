import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DIR_PREFIX, reapOrphans } from '../src/processes.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function deadPid(): number {
  const done = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(done.stdout);
}

describe('reapOrphans', () => {
  it('kills the processes of a control plane whose owner died, and deletes its folder', async () => {
    const root = mkdtempSync(join(tmpdir(), 'reap-test-'));
    roots.push(root);
    const orphanDir = join(root, `${DIR_PREFIX}orphan`);
    mkdirSync(orphanDir);
    // A stand-in for etcd: a long-lived process whose command line names the folder.
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600_000)', orphanDir], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    writeFileSync(join(orphanDir, 'owner.pid'), `${deadPid()}\n`);
    writeFileSync(join(orphanDir, 'pids'), `${child.pid}\n`);

    const liveDir = join(root, `${DIR_PREFIX}live`);
    mkdirSync(liveDir);
    writeFileSync(join(liveDir, 'owner.pid'), `${process.pid}\n`);

    expect(reapOrphans(root)).toBe(1);
    await exited;
    expect(existsSync(orphanDir)).toBe(false);
    expect(existsSync(liveDir)).toBe(true);
  });

  it('never kills a recorded pid whose command line does not name the folder (pid reuse)', () => {
    const root = mkdtempSync(join(tmpdir(), 'reap-test-'));
    roots.push(root);
    const orphanDir = join(root, `${DIR_PREFIX}reused`);
    mkdirSync(orphanDir);
    writeFileSync(join(orphanDir, 'owner.pid'), `${deadPid()}\n`);
    writeFileSync(join(orphanDir, 'pids'), `${process.pid}\n`); // this test process: must survive
    expect(reapOrphans(root)).toBe(1);
    expect(existsSync(orphanDir)).toBe(false);
  });
});
