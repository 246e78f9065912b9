/**
 * The chain's backup format in object storage, and the one check of a backup: a manifest naming the chain (its
 * genesis hash), the height and the hash of each segment, and segments of consecutive finalized blocks (NDJSON,
 * gzip-compressed by the writer; the hash is of the stored bytes). Finalized blocks never change, so a backup
 * only ever adds segments; the manifest is replaced last, so a reader sees the old backup or the new one.
 *
 * `BackupVerifier` judges a backup without trusting the bucket: the manifest's chain against the pinned genesis,
 * each segment's bytes against its hash, and every block through `ChainVerifier` (link, body, finality
 * certificate against the set the chain itself makes active), then the tip against the manifest.
 */
import * as z from 'zod';
import { sha256Hex, verifySignature } from '#platform-crypto';
import { blockHash } from './block.ts';
import { ChainVerifier } from './chain-verify.ts';
import type { Verify } from './finality.ts';
import { Block, ChainId, HashHex, Height } from './schemas.ts';

export const BACKUP_FORMAT = 'scriptorium-ledger-backup/1';
/** The manifest's object key under the backup's prefix. */
export const MANIFEST_KEY = 'manifest.json';

const SEGMENT_KEY = /^segments\/(\d{12})-(\d{12})\.ndjson\.gz$/;

/** The object key of the segment holding blocks `from`..`to` (12 digits each, so keys sort by height). */
export function segmentKey(from: number, to: number): string {
  return `segments/${String(from).padStart(12, '0')}-${String(to).padStart(12, '0')}.ndjson.gz`;
}

export const BackupSegment = z.strictObject({
  key: z.string().regex(SEGMENT_KEY, 'want segments/<from>-<to>.ndjson.gz'),
  from: Height,
  to: Height,
  /** SHA-256 of the stored object's bytes. */
  sha256: HashHex,
  bytes: z.number().int().min(0),
  records: z.number().int().min(0),
  /** Hash of the segment's last block. */
  last_hash: HashHex,
});
export type BackupSegment = z.infer<typeof BackupSegment>;

export const BackupManifest = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  chain_id: ChainId,
  genesis_hash: HashHex,
  /** Height of the last block in the backup. */
  height: Height,
  tip_hash: HashHex,
  records: z.number().int().min(0),
  /** When this manifest was written (ISO 8601). */
  created_at: z.string().max(64),
  segments: z.array(BackupSegment).min(1),
});
export type BackupManifest = z.infer<typeof BackupManifest>;

export type BackupStep = { ok: true } | { ok: false; height: number; reason: string };

const fail = (height: number, reason: string): BackupStep => ({ ok: false, height, reason });

/**
 * Reads a manifest's JSON text: the schema, then the segments' own arithmetic (contiguous from block 0 to
 * `height`, keys that name their range). A lie about a hash is found later, by the segment's bytes.
 */
export function parseManifest(text: string): { ok: true; manifest: BackupManifest } | (BackupStep & { ok: false }) {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, height: 0, reason: 'the manifest is not JSON' };
  }
  const parsed = BackupManifest.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, height: 0, reason: `the manifest is malformed: ${issue?.path.join('.')}: ${issue?.message}` };
  }
  const m = parsed.data;
  let next = 0;
  for (const s of m.segments) {
    if (s.from !== next)
      return {
        ok: false,
        height: next,
        reason: `segments leave a gap: expected one from block ${next}, found ${s.key}`,
      };
    if (s.to < s.from) return { ok: false, height: s.from, reason: `segment ${s.key} ends before it starts` };
    if (s.key !== segmentKey(s.from, s.to))
      return { ok: false, height: s.from, reason: `segment ${s.key} does not name blocks ${s.from}-${s.to}` };
    next = s.to + 1;
  }
  if (next !== m.height + 1)
    return { ok: false, height: next, reason: `the segments end at block ${next - 1}, the manifest says ${m.height}` };
  return { ok: true, manifest: m };
}

/**
 * Verifies a backup segment by segment, in order.
 * @example
 * const v = new BackupVerifier(manifest, genesis);
 * for (const s of manifest.segments) { v.segmentBytes(s, bytes); for (const b of decode(bytes)) v.block(b); }
 * v.finish();
 */
export class BackupVerifier {
  readonly manifest: BackupManifest;
  readonly #chain: ChainVerifier;
  #segment = 0;
  #expected = 0;
  #lastHash = '';
  #records = 0;
  #failed: BackupStep | undefined;

  constructor(manifest: BackupManifest, genesis: Block, verify: Verify = verifySignature) {
    this.manifest = manifest;
    this.#chain = new ChainVerifier(genesis, verify);
  }

  /** The pinned chain against the manifest: call first. */
  start(): BackupStep {
    if (this.manifest.genesis_hash !== this.#chain.genesisHash)
      return this.#fail(
        0,
        `the backup is of another chain (genesis ${this.manifest.genesis_hash.slice(0, 16)}…, expected ${this.#chain.genesisHash.slice(0, 16)}…)`,
      );
    if (this.manifest.chain_id !== this.#chain.genesis.header.chain_id)
      return this.#fail(
        0,
        `the backup names chain id ${this.manifest.chain_id}, the genesis ${this.#chain.genesis.header.chain_id}`,
      );
    return { ok: true };
  }

  /** The next segment's stored bytes against the manifest's hash and size. */
  segmentBytes(segment: BackupSegment, bytes: Uint8Array): BackupStep {
    if (this.#failed) return this.#failed;
    const want = this.manifest.segments[this.#segment];
    if (want === undefined || want.key !== segment.key)
      return this.#fail(segment.from, `segment ${segment.key} is not the next one in the manifest`);
    if (bytes.length !== want.bytes)
      return this.#fail(want.from, `segment ${want.key}: ${bytes.length} bytes, the manifest says ${want.bytes}`);
    const hash = sha256Hex(bytes);
    if (hash !== want.sha256)
      return this.#fail(
        want.from,
        `segment ${want.key}: SHA-256 ${hash.slice(0, 16)}… differs from the manifest's ${want.sha256.slice(0, 16)}…`,
      );
    return { ok: true };
  }

  /** The next block (any JSON: the schema is checked here). Block 0 must be the pinned genesis. */
  block(data: unknown): BackupStep {
    if (this.#failed) return this.#failed;
    const segment = this.manifest.segments[this.#segment];
    const h = this.#expected;
    if (segment === undefined) return this.#fail(h, `block ${h} lies past the manifest's last segment`);
    const parsed = Block.safeParse(data);
    if (!parsed.success) return this.#fail(h, `block ${h} is malformed: ${parsed.error.issues[0]?.message}`);
    const block = parsed.data;
    if (block.header.height !== h) return this.#fail(h, `expected block ${h}, found block ${block.header.height}`);
    const hash = blockHash(block.header);
    if (h === 0) {
      if (hash !== this.#chain.genesisHash) return this.#fail(0, 'block 0 is not the pinned genesis block');
    } else {
      const step = this.#chain.add(block);
      if (!step.ok) return this.#fail(step.height, step.reason);
    }
    this.#records += block.records.length;
    this.#lastHash = hash;
    this.#expected = h + 1;
    if (h === segment.to) {
      if (hash !== segment.last_hash)
        return this.#fail(h, `segment ${segment.key}: its last block's hash differs from the manifest's`);
      this.#segment++;
    }
    return { ok: true };
  }

  /** After the last block: every segment read, the tip and the record count as the manifest says. */
  finish(): BackupStep {
    if (this.#failed) return this.#failed;
    const h = this.#expected - 1;
    if (this.#segment !== this.manifest.segments.length) {
      const s = this.manifest.segments[this.#segment];
      return this.#fail(
        this.#expected,
        `segment ${s?.key} ended early: block ${h} is its last, the manifest says ${s?.to}`,
      );
    }
    if (h !== this.manifest.height || this.#lastHash !== this.manifest.tip_hash)
      return this.#fail(h, `the tip differs from the manifest's (height ${this.manifest.height})`);
    if (this.#records !== this.manifest.records)
      return this.#fail(h, `${this.#records} records, the manifest says ${this.manifest.records}`);
    return { ok: true };
  }

  /** Height of the last block verified (-1 before block 0). */
  get height(): number {
    return this.#expected - 1;
  }

  #fail(height: number, reason: string): BackupStep {
    this.#failed = fail(height, reason);
    return this.#failed;
  }
}
