// Backups of a real 4-node chain to a real S3-compatible server (SeaweedFS over TLS from the test CA), through the
// image's own commands: `ledger-node backup` (incremental), `restore` into wiped data directories (the same tip,
// then new blocks; a restored node behind the live chain catches up from its peers), `backup-verify` (the drill),
// and hostile buckets — a changed byte, a removed segment, a manifest that lies about a hash, a segment rewritten
// with its hash updated to match — each refused with the height and a readable reason, leaving no chain behind.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { type BackupManifest, type Block, blockHash, sha256Hex } from '@scriptorium/ledger-protocol';
import { startTestS3, type TestS3 } from '@scriptorium/test-support/s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3Client } from '../src/backup/index.ts';
import { records, runCli } from './helpers.ts';
import { createTestPki, type TestPki } from './tls-certs.ts';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const BUCKET = 'ledger-backups';
let dir: string;
let pki: TestPki;
let s3: TestS3;
let client: S3Client;
let cluster: LocalCluster;

interface Result {
  ok: boolean;
  command: string;
  height?: number;
  tipHash?: string;
  previousHeight?: number;
  segments?: number;
  reason?: string;
  liveHash?: string;
  skipped?: string;
}

const node = (i: number) => cluster.nodes[i] as LocalNode;

/** Runs a backup command as the image does; its JSON line and exit status. */
function run(
  command: string,
  prefix: string,
  env: Record<string, string> = {},
): Result & { status: number | null; stderr: string } {
  const res = runCli([command], undefined, {
    BACKUP__ENDPOINT: s3.endpoint,
    BACKUP__BUCKET: BUCKET,
    BACKUP__PREFIX: prefix,
    BACKUP__ACCESS_KEY_ID: s3.accessKeyId,
    BACKUP__SECRET_ACCESS_KEY: s3.secretAccessKey,
    BACKUP__CA_FILE: pki.caFile,
    BACKUP__NODE_URL: node(0).url,
    BACKUP__SEGMENT_BYTES: String(8 * 1024),
    NODE_GENESIS_FILE: cluster.genesisFile,
    NODE_DATA_DIR: join(dir, 'unused'),
    BACKUP__SCRATCH_DIR: join(dir, 'scratch'),
    ...env,
  });
  const line = res.stdout.trim().split('\n').at(-1) ?? '{}';
  return { ...(JSON.parse(line) as Result), status: res.status, stderr: res.stderr };
}

let batch = 0;
async function submit(count: number): Promise<void> {
  const before = await cluster.height(node(0));
  const recs = records(`b${batch++}`, count);
  for (let i = 0; i < recs.length; i += 500)
    expect((await cluster.post(node(0), '/mempool', { records: recs.slice(i, i + 500) })).status).toBe(200);
  await cluster.waitFor(
    'new blocks',
    () => cluster.height(node(0)),
    (h) => h > before,
  );
}

async function manifestOf(prefix: string): Promise<BackupManifest> {
  return JSON.parse(((await client.get(`${prefix}/manifest.json`)) as Buffer).toString('utf8')) as BackupManifest;
}

/** Copies a backup to another prefix, changing what `edit` changes. */
async function copyBackup(from: string, to: string, edit: (m: BackupManifest, objects: Map<string, Buffer>) => void) {
  const manifest = await manifestOf(from);
  const objects = new Map<string, Buffer>();
  for (const s of manifest.segments) objects.set(s.key, (await client.get(`${from}/${s.key}`)) as Buffer);
  edit(manifest, objects);
  for (const [key, bytes] of objects) await client.put(`${to}/${key}`, bytes);
  await client.put(`${to}/manifest.json`, Buffer.from(JSON.stringify(manifest)));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-backup-'));
  pki = createTestPki(dir);
  s3 = await startTestS3({ tls: { certFile: pki.certFile, keyFile: pki.keyFile, ca: pki.ca }, buckets: [BUCKET] });
  client = new S3Client({
    endpoint: s3.endpoint,
    bucket: BUCKET,
    credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    ca: pki.ca,
  });
  cluster = await LocalCluster.create({
    size: 4,
    roundTimeoutMs: 400,
    env: { NODE_CONSENSUS__MAX_BLOCK_RECORDS: '200' },
  });
  await cluster.startAll();
  await submit(600);
});

afterAll(async () => {
  await cluster?.stopAll();
  await client?.close();
  await s3?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('backup, restore and drill against a real S3 server', () => {
  let first: ReturnType<typeof run>;

  it('backs up the chain in segments, then only what is new', async () => {
    first = run('backup', 'prod/ledger');
    expect(first.status, first.stderr).toBe(0);
    expect(first).toMatchObject({ ok: true, previousHeight: -1 });
    const m1 = await manifestOf('prod/ledger');
    expect(m1.height).toBe(first.height);
    expect(m1.segments.length).toBeGreaterThan(1);
    expect(m1.genesis_hash).toBe(blockHash(((await cluster.get(node(0), '/blocks/0')).body as Block).header));
    const tip = (await cluster.get(node(0), `/blocks/${m1.height}`)).body as Block;
    expect(m1.tip_hash).toBe(blockHash(tip.header));

    // Nothing new: nothing written.
    const same = await cluster.height(node(0));
    if (same === m1.height) expect(run('backup', 'prod/ledger')).toMatchObject({ ok: true, segments: 0 });

    await submit(300);
    const second = run('backup', 'prod/ledger');
    expect(second).toMatchObject({ ok: true, previousHeight: m1.height });
    const m2 = await manifestOf('prod/ledger');
    expect(m2.segments.slice(0, m1.segments.length)).toEqual(m1.segments);
    expect(m2.segments.length).toBe(m1.segments.length + (second.segments ?? 0));
    expect(m2.height).toBeGreaterThan(m1.height);
  });

  it('the drill verifies the whole backup and matches the live chain at its height', () => {
    const drill = run('backup-verify', 'prod/ledger');
    expect(drill.status, drill.stderr).toBe(0);
    expect(drill.ok).toBe(true);
    expect(drill.liveHash).toBe(drill.tipHash);
  });

  it('refuses hostile backups with the height and the reason, and leaves no chain', async () => {
    const m = await manifestOf('prod/ledger');
    const second = m.segments[1] as BackupManifest['segments'][number];
    const cases: Array<[string, (m: BackupManifest, o: Map<string, Buffer>) => void, RegExp]> = [
      [
        'one byte changed',
        (_m, o) => {
          const b = Buffer.from(o.get(second.key) as Buffer);
          b[Math.floor(b.length / 2)] = (b[Math.floor(b.length / 2)] as number) ^ 0x01;
          o.set(second.key, b);
        },
        /SHA-256 .* differs from the manifest's/,
      ],
      ['a segment removed', (_m, o) => o.delete(second.key), /missing from the bucket/],
      [
        'a manifest that lies about a hash',
        (mm) => {
          (mm.segments[1] as { sha256: string }).sha256 = sha256Hex(Buffer.from('something else'));
        },
        /SHA-256 .* differs from the manifest's/,
      ],
      [
        'a record rewritten, its segment hash updated to match',
        (mm, o) => {
          const lines = gunzipSync(o.get(second.key) as Buffer)
            .toString('utf8')
            .trimEnd()
            .split('\n');
          const at = lines.findIndex((l) => (JSON.parse(l) as Block).records.length > 0);
          const block = JSON.parse(lines[at] as string) as Block;
          (block.records[0] as Record<string, unknown>).value = 'forged';
          lines[at] = JSON.stringify(block);
          const bytes = gzipSync(`${lines.join('\n')}\n`);
          o.set(second.key, bytes);
          Object.assign(mm.segments[1] as object, { sha256: sha256Hex(bytes), bytes: bytes.length });
        },
        /merkle|root/i,
      ],
    ];
    for (const [i, [what, edit, reason]] of cases.entries()) {
      const prefix = `tampered/${i}`;
      await copyBackup('prod/ledger', prefix, edit);
      const dataDir = join(dir, `refused-${i}`);
      const res = run('restore', prefix, { NODE_DATA_DIR: dataDir });
      expect(res.status, what).toBe(1);
      expect(res.ok, what).toBe(false);
      expect(res.reason, what).toMatch(reason);
      expect(res.height, what).toBeGreaterThanOrEqual(second.from);
      expect(res.height, what).toBeLessThanOrEqual(second.to + 1);
      expect(res.stderr).toContain(`refused at height ${res.height}`);
      expect(existsSync(join(dataDir, 'blocks.wal')), `${what}: nothing to start from`).toBe(false);
      // The drill of the same bucket fails the same way.
      const drill = run('backup-verify', prefix);
      expect(drill).toMatchObject({ ok: false, reason: res.reason, height: res.height });
    }
    // A backup of another chain is refused at block 0.
    const other = await LocalCluster.create({ size: 1 });
    try {
      const res = run('restore', 'prod/ledger', {
        NODE_GENESIS_FILE: other.genesisFile,
        NODE_DATA_DIR: join(dir, 'other'),
      });
      expect(res).toMatchObject({ ok: false, height: 0 });
      expect(res.reason).toMatch(/another chain/);
    } finally {
      await other.stopAll();
    }
  });

  it('a node wiped and restored from an older backup catches up from its live peers', async () => {
    const backedUp = (await manifestOf('prod/ledger')).height;
    await submit(200);
    const n3 = node(3);
    await cluster.stop(n3);
    const chainDir = join(n3.dataDir, 'chain');
    rmSync(chainDir, { recursive: true, force: true });
    const res = run('restore', 'prod/ledger', { NODE_DATA_DIR: chainDir });
    expect(res).toMatchObject({ ok: true, height: backedUp });
    // A second run finds the chain and restores nothing over it.
    expect(run('restore', 'prod/ledger', { NODE_DATA_DIR: chainDir })).toMatchObject({
      ok: true,
      skipped: expect.any(String),
    });
    await cluster.start(n3);
    const live = await cluster.height(node(0));
    expect(live).toBeGreaterThan(backedUp);
    await cluster.waitFor(
      'the restored node catches up',
      () => cluster.height(n3),
      (h) => h >= live,
    );
  });

  it('backup, every node wiped, restore: the same tip, then new blocks', async () => {
    const backup = run('backup', 'prod/ledger');
    expect(backup.ok).toBe(true);
    const { height, tipHash } = backup as { height: number; tipHash: string };
    for (const n of cluster.nodes) await cluster.stop(n);
    for (const n of cluster.nodes) {
      const chainDir = join(n.dataDir, 'chain');
      rmSync(chainDir, { recursive: true, force: true });
      mkdirSync(chainDir);
      expect(run('restore', 'prod/ledger', { NODE_DATA_DIR: chainDir })).toMatchObject({ ok: true, height, tipHash });
    }
    await cluster.startAll();
    for (const n of cluster.nodes) {
      const chain = (await cluster.get(n, '/chain')).body as { height: number; latest_hash: string };
      expect(chain.height).toBeGreaterThanOrEqual(height);
      const block = (await cluster.get(n, `/blocks/${height}`)).body as Block;
      expect(blockHash(block.header)).toBe(tipHash);
    }
    await submit(50);
    await cluster.waitFor(
      'every node finalizes past the restored tip',
      () => Promise.all(cluster.nodes.map((n) => cluster.height(n))),
      (hs) => hs.every((h) => h > height),
    );
  });
});
