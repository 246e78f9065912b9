// Restore: a backup's blocks into a node's data directory, verified first by the protocol's one verifier
// (BackupVerifier: the manifest against the pinned genesis, every segment's hash, every block's link, body and
// finality certificate through ChainVerifier, the tip). Blocks are written to a scratch folder beside the data
// directory and moved into place only when the whole backup verified: a backup that does not verify leaves
// nothing a node could start from. The drill is the same restore into a scratch folder, compared with the live
// chain at the backup's height.
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BackupVerifier, Block, blockHash } from '@scriptorium/ledger-protocol';
import { BlockStore } from '../storage/block-store.ts';
import { objectKey, readManifest } from './backup.ts';
import { BackupError } from './errors.ts';
import type { NodeReader } from './node-reader.ts';
import type { S3Client } from './s3-client.ts';
import { decodeSegment } from './segments.ts';

export interface RestoreInput {
  s3: S3Client;
  prefix: string;
  genesis: Block;
  /** The node's data directory (NODE_DATA_DIR); it must hold no chain yet. */
  dataDir: string;
}

export interface RestoreResult {
  height: number;
  tipHash: string;
  records: number;
  segments: number;
  bytes: number;
  createdAt: string;
}

const BLOCKS_FILE = 'blocks.wal';

/** True when the data directory already holds a chain (a restore never writes over one). */
export function holdsChain(dataDir: string): boolean {
  const file = join(dataDir, BLOCKS_FILE);
  return existsSync(file) && statSync(file).size > 0;
}

/** @example await restoreBackup({s3, prefix, genesis, dataDir: '/var/lib/ledger-node/data'}) */
export async function restoreBackup(input: RestoreInput): Promise<RestoreResult> {
  const { s3, prefix, genesis, dataDir } = input;
  if (holdsChain(dataDir)) throw new BackupError(0, `${dataDir} already holds a chain: nothing restored over it`);
  const manifest = await readManifest(s3, prefix);
  if (!manifest)
    throw new BackupError(0, `no backup at s3://${s3.bucket}/${prefix ? `${prefix}/` : ''} (no manifest.json)`);
  const verifier = new BackupVerifier(manifest, genesis);
  const started = verifier.start();
  if (!started.ok) throw new BackupError(started.height, started.reason);
  const scratch = `${dataDir.replace(/\/$/, '')}.restoring`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  const { store } = BlockStore.open<Block>(scratch);
  let open = true;
  const close = () => {
    if (open) store.close();
    open = false;
  };
  let bytes = 0;
  try {
    for (const segment of manifest.segments) {
      const data = await s3.get(objectKey(prefix, segment.key));
      if (data === undefined) throw new BackupError(segment.from, `segment ${segment.key} is missing from the bucket`);
      const hashed = verifier.segmentBytes(segment, data);
      if (!hashed.ok) throw new BackupError(hashed.height, hashed.reason);
      let blocks: unknown[];
      try {
        blocks = decodeSegment(data);
      } catch (err) {
        throw new BackupError(segment.from, `segment ${segment.key}: ${(err as Error).message}`);
      }
      for (const block of blocks) {
        const step = verifier.block(block);
        if (!step.ok) throw new BackupError(step.height, step.reason);
        store.append(verifier.height, block as Block);
      }
      bytes += data.length;
    }
    const done = verifier.finish();
    if (!done.ok) throw new BackupError(done.height, done.reason);
    close();
    mkdirSync(dataDir, { recursive: true });
    renameSync(join(scratch, BLOCKS_FILE), join(dataDir, BLOCKS_FILE));
    return {
      height: manifest.height,
      tipHash: manifest.tip_hash,
      records: manifest.records,
      segments: manifest.segments.length,
      bytes,
      createdAt: manifest.created_at,
    };
  } finally {
    close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

export interface DrillResult extends RestoreResult {
  /** The live chain's hash at the backup's height. */
  liveHash: string;
}

/**
 * The restore drill: the latest backup restored into `scratchDir` (removed after), the whole chain verified, and
 * its tip compared with the live node's block at that height.
 */
export async function drillBackup(
  input: Omit<RestoreInput, 'dataDir'> & { scratchDir: string; node: NodeReader },
): Promise<DrillResult> {
  const dataDir = join(input.scratchDir, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  try {
    const restored = await restoreBackup({ ...input, dataDir });
    const live = Block.safeParse(await input.node.block(restored.height));
    if (!live.success)
      throw new BackupError(restored.height, `the live node served a malformed block ${restored.height}`);
    const liveHash = blockHash(live.data.header);
    if (liveHash !== restored.tipHash)
      throw new BackupError(
        restored.height,
        `the backup's tip ${restored.tipHash.slice(0, 16)}… differs from the live chain's ${liveHash.slice(0, 16)}…`,
      );
    return { ...restored, liveHash };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
