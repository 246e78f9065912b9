// An incremental backup of a node's finalized chain: what is new since the manifest's height, read from the node's
// read API, checked (each block links to the one before it and its body matches its header: the protocol's
// checks), cut into segments, uploaded, and then the manifest replaced. A run that fails leaves the previous
// manifest in place (segments it uploaded are not named by any manifest and are overwritten by the next run).
import {
  BACKUP_FORMAT,
  type BackupManifest,
  type BackupSegment,
  Block,
  blockHash,
  checkBody,
  checkLink,
  MANIFEST_KEY,
  parseManifest,
  segmentKey,
  sha256Hex,
} from '@scriptorium/ledger-protocol';
import { BackupError } from './errors.ts';
import type { NodeReader } from './node-reader.ts';
import type { S3Client } from './s3-client.ts';
import { encodeSegment } from './segments.ts';

export interface BackupInput {
  s3: S3Client;
  /** Key prefix ('' or `a/b`). */
  prefix: string;
  node: NodeReader;
  /** The pinned genesis: the backup is of this chain or of none. */
  genesis: Block;
  segmentBytes: number;
  now?: () => Date;
}

export interface BackupResult {
  /** Height and tip of the backup after this run. */
  height: number;
  tipHash: string;
  /** Height before this run (-1: there was none). */
  previousHeight: number;
  blocks: number;
  records: number;
  segments: number;
  /** Stored (compressed) bytes uploaded, and the blocks' JSON size before compression. */
  bytes: number;
  jsonBytes: number;
}

export const objectKey = (prefix: string, key: string): string => (prefix ? `${prefix}/${key}` : key);

/** Reads the backup's manifest, or undefined when there is none; a manifest that does not parse is a BackupError. */
export async function readManifest(s3: S3Client, prefix: string): Promise<BackupManifest | undefined> {
  const bytes = await s3.get(objectKey(prefix, MANIFEST_KEY));
  if (bytes === undefined) return undefined;
  const parsed = parseManifest(bytes.toString('utf8'));
  if (!parsed.ok) throw new BackupError(parsed.height, parsed.reason);
  return parsed.manifest;
}

/** @example await runBackup({s3, prefix: 'prod/ledger', node, genesis, segmentBytes: 16 << 20}) */
export async function runBackup(input: BackupInput): Promise<BackupResult> {
  const { s3, prefix, node, genesis } = input;
  const now = input.now ?? (() => new Date());
  const genesisHash = blockHash(genesis.header);
  const previous = await readManifest(s3, prefix);
  if (previous && previous.genesis_hash !== genesisHash)
    throw new BackupError(
      0,
      `s3://${s3.bucket}/${prefix} holds a backup of another chain (genesis ${previous.genesis_hash.slice(0, 16)}…)`,
    );
  const tip = await node.chain();
  const start = previous ? previous.height + 1 : 0;
  const result: BackupResult = {
    height: previous?.height ?? -1,
    tipHash: previous?.tip_hash ?? '',
    previousHeight: previous?.height ?? -1,
    blocks: 0,
    records: 0,
    segments: 0,
    bytes: 0,
    jsonBytes: 0,
  };
  if (tip.height < start) {
    if (previous && tip.height < previous.height)
      throw new BackupError(tip.height, `the node is at height ${tip.height}, behind the backup's ${previous.height}`);
    return result;
  }
  // The node's chain must continue the backup's: its block at the backup's height has the backup's tip hash.
  let parent: Block | undefined;
  if (previous) {
    parent = parseBlock(await node.block(previous.height), previous.height);
    if (blockHash(parent.header) !== previous.tip_hash)
      throw new BackupError(previous.height, "the node's block differs from the backup's tip: another chain or a fork");
  }
  const segments: BackupSegment[] = [...(previous?.segments ?? [])];
  let records = previous?.records ?? 0;
  let lines: string[] = [];
  let lineBytes = 0;
  let first = start;
  let segmentRecords = 0;
  let lastHash = previous?.tip_hash ?? '';
  const flush = async (to: number) => {
    const bytes = encodeSegment(lines);
    const key = segmentKey(first, to);
    await s3.put(objectKey(prefix, key), bytes, 'application/gzip');
    segments.push({
      key,
      from: first,
      to,
      sha256: sha256Hex(bytes),
      bytes: bytes.length,
      records: segmentRecords,
      last_hash: lastHash,
    });
    result.segments++;
    result.bytes += bytes.length;
    result.jsonBytes += lineBytes;
    lines = [];
    lineBytes = 0;
    segmentRecords = 0;
    first = to + 1;
  };
  let h = start;
  for await (const data of node.blocks(start, tip.height)) {
    const block = parseBlock(data, h);
    if (h === 0) {
      if (blockHash(block.header) !== genesisHash)
        throw new BackupError(0, "the node's block 0 is not the pinned genesis");
    } else {
      const link = parent ? checkLink(parent, block) : { ok: false as const, reason: 'no parent' };
      if (!link.ok) throw new BackupError(h, link.reason);
      const body = checkBody(block);
      if (!body.ok) throw new BackupError(h, body.reason);
    }
    const line = JSON.stringify(block);
    lines.push(line);
    lineBytes += Buffer.byteLength(line) + 1;
    segmentRecords += block.records.length;
    records += block.records.length;
    result.blocks++;
    result.records += block.records.length;
    lastHash = blockHash(block.header);
    parent = block;
    if (lineBytes >= input.segmentBytes || h === tip.height) await flush(h);
    h++;
  }
  const manifest: BackupManifest = {
    format: BACKUP_FORMAT,
    chain_id: genesis.header.chain_id,
    genesis_hash: genesisHash,
    height: tip.height,
    tip_hash: lastHash,
    records,
    created_at: now().toISOString(),
    segments,
  };
  await s3.put(
    objectKey(prefix, MANIFEST_KEY),
    Buffer.from(`${JSON.stringify(manifest, null, 1)}\n`),
    'application/json',
  );
  result.height = tip.height;
  result.tipHash = lastHash;
  return result;
}

function parseBlock(data: unknown, height: number): Block {
  const parsed = Block.safeParse(data);
  if (!parsed.success)
    throw new BackupError(height, `the node served a malformed block: ${parsed.error.issues[0]?.message}`);
  if (parsed.data.header.height !== height)
    throw new BackupError(height, `the node served block ${parsed.data.header.height} for ${height}`);
  return parsed.data;
}
