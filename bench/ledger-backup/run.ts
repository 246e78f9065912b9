// Ledger backup benchmark (`BENCH=ledger-backup make bench`): a 4-validator chain of 1M records (real node processes
// on loopback), backed up to a real S3-compatible server (SeaweedFS over TLS, as the tests start it) by the image's
// own `ledger-node backup` command as a separate process; then the restore of the same backup into an empty data
// folder, and the restore drill (`backup-verify`). Last, the load a backup puts on the validator it reads: finality
// latency at 1,000 records/s and that validator's CPU, for the same window without and with a full backup running.
// Writes bench/results/ledger-backup.json. BENCH_BACKUP_RECORDS changes the chain's size (default 1,000,000).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalNode } from '@scriptorium/harness/local-cluster';
import { createTestS3Tls, startTestS3 } from '@scriptorium/test-support/s3';
import { cpuSeconds } from '../proc-cpu.ts';
import { benchCluster, loadTarget, runLoad } from '../validators.ts';

const here = import.meta.dirname;
const MAIN = join(here, '../../services/ledger-node/src/main.ts');
const RECORDS = Number(process.env.BENCH_BACKUP_RECORDS ?? 1_000_000);
const BUCKET = 'bench-backups';

const dir = mkdtempSync(join(tmpdir(), 'bench-ledger-backup-'));
const tls = createTestS3Tls(dir);
const s3 = await startTestS3({ tls, buckets: [BUCKET] });
const cluster = await benchCluster({ size: 4 });
const node0 = cluster.nodes[0] as LocalNode;

interface CommandRun {
  seconds: number;
  cpuSeconds: number;
  result: Record<string, unknown>;
}

/** Runs a backup command as its own process (as the Job does); wall time, its CPU, its JSON line. */
function command(name: string, prefix: string, env: Record<string, string> = {}): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [MAIN, name], {
      env: {
        PATH: process.env.PATH ?? '',
        BACKUP__ENDPOINT: s3.endpoint,
        BACKUP__BUCKET: BUCKET,
        BACKUP__PREFIX: prefix,
        BACKUP__ACCESS_KEY_ID: s3.accessKeyId,
        BACKUP__SECRET_ACCESS_KEY: s3.secretAccessKey,
        BACKUP__CA_FILE: tls.caFile,
        BACKUP__NODE_URL: node0.url,
        BACKUP__SCRATCH_DIR: join(dir, 'scratch'),
        NODE_GENESIS_FILE: cluster.genesisFile,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let cpu = 0;
    const sample = setInterval(() => {
      try {
        cpu = cpuSeconds(child.pid as number);
      } catch {
        // exited
      }
    }, 200);
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => {
      clearInterval(sample);
      const result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
      if (code !== 0) reject(new Error(`${name} exited ${code}: ${out}`));
      else resolve({ seconds: (performance.now() - started) / 1000, cpuSeconds: cpu, result });
    });
  });
}

const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const results: Record<string, unknown> = {
  at: new Date().toISOString(),
  machine: {
    cpus: cpus().length,
    model: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    load_average_at_start: loadavg(),
  },
};

try {
  await cluster.startAll();
  const target = loadTarget(cluster);
  // 1. The chain: RECORDS records through consensus (closed loop, as the ledger benchmark's throughput run).
  const fillStarted = performance.now();
  let filled = 0;
  while (filled < RECORDS) {
    const r = await runLoad({
      ...target,
      mode: 'throughput',
      durationMs: 60_000,
      batch: 500,
      concurrency: 4,
      intervalMs: 0,
      drainMs: 60_000,
      maxOutstanding: 20_000,
    });
    filled += r.finalized;
    console.log(`chain: ${filled} records finalized (${r.records_per_second} records/s)`);
  }
  const height = await cluster.height(node0);
  results.chain = {
    records: filled,
    height,
    fill_seconds: round((performance.now() - fillStarted) / 1000),
    load_average: loadavg(),
  };

  // 2. A full backup, then an incremental one with nothing new.
  const full = await command('backup', 'full');
  const jsonMB = Number(full.result.jsonBytes) / 1e6;
  const storedMB = Number(full.result.bytes) / 1e6;
  results.backup = {
    seconds: round(full.seconds),
    command_cpu_seconds: round(full.cpuSeconds),
    blocks: full.result.blocks,
    records: full.result.records,
    segments: full.result.segments,
    json_mb: round(jsonMB),
    stored_mb: round(storedMB),
    mb_per_second_json: round(jsonMB / full.seconds),
    mb_per_second_stored: round(storedMB / full.seconds),
    records_per_second: Math.round(Number(full.result.records) / full.seconds),
    load_average: loadavg(),
  };
  console.log('backup', results.backup);
  const again = await command('backup', 'full');
  results.incremental_nothing_new = { seconds: round(again.seconds), segments: again.result.segments };

  // 3. Restore into an empty data folder, and the drill.
  const restoreDir = join(dir, 'restored');
  mkdirSync(restoreDir);
  const restore = await command('restore', 'full', { NODE_DATA_DIR: join(restoreDir, 'data') });
  results.restore = {
    seconds: round(restore.seconds),
    cpu_seconds: round(restore.cpuSeconds),
    records_per_second: Math.round(Number(restore.result.records) / restore.seconds),
    load_average: loadavg(),
  };
  console.log('restore', results.restore);
  rmSync(restoreDir, { recursive: true, force: true });
  const drill = await command('backup-verify', 'full');
  results.drill = {
    seconds: round(drill.seconds),
    cpu_seconds: round(drill.cpuSeconds),
    ok: drill.result.ok,
    load_average: loadavg(),
  };
  console.log('drill', results.drill);

  // 4. The validator a backup reads: finality at 1,000 records/s and its CPU, without and with a full backup.
  const window = async (withBackup: boolean) => {
    const pid = node0.process?.pid as number;
    const cpuBefore = cpuSeconds(pid);
    const started = performance.now();
    const backup = withBackup ? command('backup', `during-load-${Date.now()}`) : undefined;
    const load = await runLoad({
      ...target,
      mode: 'rate',
      durationMs: 30_000,
      batch: 100,
      concurrency: 1,
      intervalMs: 100,
      drainMs: 30_000,
      maxOutstanding: 0,
    });
    const seconds = (performance.now() - started) / 1000;
    const validatorCpu = (cpuSeconds(pid) - cpuBefore) / seconds;
    const b = await backup;
    return {
      finality_ms: load.latency_ms,
      finalized: load.finalized,
      validator_cpu_cores: round(validatorCpu, 2),
      ...(b ? { backup_seconds: round(b.seconds), backup_finished_within_window: b.seconds <= seconds } : {}),
      load_average: loadavg(),
    };
  };
  results.load_without_backup = await window(false);
  console.log('without backup', results.load_without_backup);
  results.load_with_backup = await window(true);
  console.log('with backup', results.load_with_backup);
} finally {
  await cluster.stopAll();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}

results.load_average_at_end = loadavg();
mkdirSync(join(here, '../results'), { recursive: true });
writeFileSync(join(here, '../results/ledger-backup.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
