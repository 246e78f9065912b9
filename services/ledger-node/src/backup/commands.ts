// `ledger-node backup`, `restore` and `backup-verify`: each reads its settings (config.ts), does one run, prints
// one JSON line with the result, and also writes it to BACKUP__RESULT_FILE (a pod's termination message, read by
// the operator). Exit 0 when done, 1 when refused or failed (the line says at which height and why).
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGenesisFile } from '../node/files.ts';
import { runBackup } from './backup.ts';
import { type BackupConfig, loadBackupConfig } from './config.ts';
import { BackupError } from './errors.ts';
import { NodeReader } from './node-reader.ts';
import { drillBackup, holdsChain, restoreBackup } from './restore.ts';
import { S3Client } from './s3-client.ts';

export type BackupCommand = 'backup' | 'restore' | 'backup-verify';

/** A termination message holds 4096 bytes; the result is far smaller, the reason is cut to fit. */
const RESULT_LIMIT = 4096;

function s3Of(config: BackupConfig): S3Client {
  const s = config.settings;
  return new S3Client({
    endpoint: s.BACKUP__ENDPOINT,
    bucket: s.BACKUP__BUCKET,
    region: s.BACKUP__REGION,
    credentials: { accessKeyId: s.BACKUP__ACCESS_KEY_ID, secretAccessKey: s.BACKUP__SECRET_ACCESS_KEY },
    ca: config.ca,
  });
}

/** The node to read: of those listed, the highest that answers (a node that is down or behind is passed over). */
async function nodeOf(config: BackupConfig, command: string): Promise<NodeReader> {
  const urls = config.settings.BACKUP__NODE_URL?.split(',') ?? [];
  if (urls.length === 0) throw new BackupError(0, `${command} needs BACKUP__NODE_URL (the node to read)`);
  const readers = urls.map((url) => new NodeReader(url, { ca: config.nodeCa, timeoutMs: 30_000 }));
  const tips = await Promise.all(
    readers.map((r) =>
      r.chain().then(
        (t) => t.height,
        (err: Error) => err,
      ),
    ),
  );
  let best = -1;
  tips.forEach((t, i) => {
    if (typeof t === 'number' && (best < 0 || t > (tips[best] as number))) best = i;
  });
  await Promise.all(readers.filter((_, i) => i !== best).map((r) => r.close()));
  if (best < 0)
    throw new BackupError(
      0,
      `no node answered: ${tips
        .map((t) => (t as Error).message)
        .join('; ')
        .slice(0, 600)}`,
    );
  return readers[best] as NodeReader;
}

/** Runs one command; returns the exit code. `env` is the process environment (tests pass their own). */
export async function runBackupCommand(
  command: BackupCommand,
  env: Record<string, string | undefined>,
): Promise<number> {
  const config = loadBackupConfig(env);
  const s = config.settings;
  const started = Date.now();
  let result: Record<string, unknown>;
  let code = 0;
  const s3 = s3Of(config);
  let node: NodeReader | undefined;
  try {
    const genesis = readGenesisFile(s.NODE_GENESIS_FILE);
    if (command === 'backup') {
      node = await nodeOf(config, command);
      const r = await runBackup({ s3, prefix: s.BACKUP__PREFIX, node, genesis, segmentBytes: s.BACKUP__SEGMENT_BYTES });
      result = { ok: true, ...r };
    } else if (command === 'restore') {
      if (holdsChain(s.NODE_DATA_DIR)) result = { ok: true, skipped: 'the data directory already holds a chain' };
      else
        result = {
          ok: true,
          ...(await restoreBackup({ s3, prefix: s.BACKUP__PREFIX, genesis, dataDir: s.NODE_DATA_DIR })),
        };
    } else {
      node = await nodeOf(config, command);
      const scratchDir = join(s.BACKUP__SCRATCH_DIR ?? tmpdir(), 'backup-drill');
      result = { ok: true, ...(await drillBackup({ s3, prefix: s.BACKUP__PREFIX, genesis, scratchDir, node })) };
    }
  } catch (err) {
    code = 1;
    result =
      err instanceof BackupError
        ? { ok: false, height: err.height, reason: err.reason }
        : { ok: false, reason: (err as Error).message };
  } finally {
    await s3.close();
    await node?.close();
  }
  result = { command, ...result, seconds: (Date.now() - started) / 1000 };
  let line = JSON.stringify(result);
  if (line.length > RESULT_LIMIT)
    line = JSON.stringify({ ...result, reason: String(result.reason ?? '').slice(0, 1000) });
  process.stdout.write(`${line}\n`);
  if (code !== 0)
    process.stderr.write(`${command}: refused at height ${String(result.height ?? '?')}: ${String(result.reason)}\n`);
  if (s.BACKUP__RESULT_FILE) {
    try {
      writeFileSync(s.BACKUP__RESULT_FILE, line);
    } catch (err) {
      process.stderr.write(`${command}: cannot write BACKUP__RESULT_FILE: ${(err as NodeJS.ErrnoException).code}\n`);
    }
  }
  return code;
}
