// Witnessing with real processes: four validators, the project's witness (`ledger-node witness`) and an independent
// one (litewitness, filippo.io/torchwood, built from the Go module proxy by tools/tlog/build.sh). The validators'
// checkpoints are cosigned by both; our verifier accepts litewitness's cosignatures and Go's golang.org/x/mod note and
// tlog packages accept our log signatures, our witness's cosignatures and our proofs. Then the hostile cases: a split
// view caught by both witnesses and by a node; a witness down (the chain keeps finalizing, the status and metrics
// show it, one consistency proof catches it up); a history rewritten with the validators' own keys, refused by both
// witnesses and, with a readable reason, by `verify-proof --witness`.
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster } from '@scriptorium/harness/local-cluster';
import { LocalWitness, witnessLogOf } from '@scriptorium/harness/local-witness';
import {
  ALG_COSIGNATURE_V1,
  type Block,
  blockHash,
  buildBlock,
  defaultOrigin,
  formatAddCheckpoint,
  formatVerifierKey,
  fromHex,
  judgeCosignatures,
  LogTree,
  logSignedCheckpoint,
  logVerifierKey,
  membershipPointerAfter,
  parseCheckpointNote,
  sealBytes,
  toHex,
  verifyEvidence,
  verifySignature,
  type WitnessStatusBody,
  witnessPolicy,
} from '@scriptorium/ledger-protocol';
import { createSigner } from '@scriptorium/ledger-protocol/keys';
import { type Litewitness, noteVerify, startLitewitness } from '@scriptorium/test-support/tlog';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BlockStore } from '../src/storage/index.ts';
import { locate, records, runCli, sleep } from './helpers.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 240_000 });

const CHAIN = 'witness-test';
const ORIGIN = defaultOrigin(CHAIN);
let cluster: LocalCluster;
let ours: LocalWitness;
let lite: Litewitness;
let dir: string;
let genesisFile: string;
let policyFlags: string[];

const status = async (i = 0) =>
  (await cluster.get(cluster.nodes[i] as never, '/checkpoint/witnesses')).body as WitnessStatusBody;
const witnessOf = (s: WitnessStatusBody, name: string) => s.witnesses.find((w) => w.name === name);
const metric = async (i: number, name: string) => {
  const text = (await cluster.get(cluster.nodes[i] as never, '/metrics')).body as string;
  return text
    .split('\n')
    .find((l) => l.startsWith(name))
    ?.split(' ')[1];
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ledger-witness-'));
  cluster = await LocalCluster.create({ size: 4, roundTimeoutMs: 500, chainId: CHAIN, dir: join(dir, 'cluster') });
  genesisFile = cluster.genesisFile;
  const validators = cluster.nodes.map((n) => n.keys.publicKey);
  ours = await LocalWitness.start({
    name: 'witness.test/ours',
    dir: join(dir, 'ours'),
    logs: [witnessLogOf(ORIGIN, validators)],
  });
  lite = await startLitewitness({
    dir: join(dir, 'lite'),
    name: 'witness.test/lite',
    logs: [{ origin: ORIGIN, keys: validators.map((v) => logVerifierKey(ORIGIN, v).text) }],
  });
  const witnesses = [
    { name: 'ours', url: ours.url, key: ours.verifierKey },
    { name: 'lite', url: lite.url, key: lite.verifierKey },
  ];
  policyFlags = [...witnesses.flatMap((w) => ['--witness', `${w.name}=${w.key}`]), '--witness-threshold', '2'];
  await cluster.startAll({
    NODE_WITNESS__WITNESSES: JSON.stringify(witnesses),
    NODE_WITNESS__THRESHOLD: '2',
    NODE_CHECKPOINT__INTERVAL_MS: '500',
    NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: '2000',
  });
});

afterAll(async () => {
  await cluster?.stopAll();
  await ours?.stop();
  await lite?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('witnessing with our witness and litewitness', () => {
  let firstWitnessed = 0;
  let firstRoot = '';

  it('finalized records end up in a checkpoint cosigned by both; every verifier accepts the evidence under the 2-of-2 policy', async () => {
    // litewitness's key, as it prints it, is the key we compute from its Ed25519 key: the same key id.
    expect(lite.verifierKey).toBe(formatVerifierKey('witness.test/lite', ALG_COSIGNATURE_V1, lite.publicKey));
    const [n0, n1] = cluster.nodes as [never, never];
    await cluster.post(n1, '/mempool', { records: records('w', 30) });
    const where = await cluster.waitFor(
      'the records final',
      () => locate(cluster, n0, ['w-3']),
      (m) => m.size === 1,
    );
    const [height, index] = where.get('w-3') as [number, number];
    const witnessed = await cluster.waitFor(
      'a checkpoint both witnesses cosigned covering the block',
      status,
      (s) => s.witnessed_size > height,
      60_000,
    );
    expect(witnessed.origin).toBe(ORIGIN);
    expect(witnessed.witnesses.map((w) => [w.name, w.last_error])).toEqual([
      ['ours', null],
      ['lite', null],
    ]);
    const note = (await cluster.get(n0, '/checkpoint')).body as string;
    const parsed = parseCheckpointNote(note);
    if (typeof parsed === 'string') throw new Error(parsed);
    firstWitnessed = parsed.checkpoint.size;
    firstRoot = toHex(parsed.checkpoint.root);
    const policy = witnessPolicy([
      { name: 'ours', key: ours.verifierKey },
      { name: 'lite', key: lite.verifierKey },
    ]);
    if (typeof policy === 'string') throw new Error(policy);
    // Our verifier accepts litewitness's cosignature (and ours).
    expect(judgeCosignatures(parsed.note, policy, verifySignature)).toMatchObject({ ok: true, invalid: [] });
    const evidence = (await cluster.get(n0, `/evidence/${height}/${index}`)).body;
    const genesis = (await cluster.get(n0, '/blocks/0')).body as Block;
    const report = verifyEvidence(evidence, { genesis, witnesses: { policy } });
    expect(report.ok, report.lines.join('\n')).toBe(true);
    expect(report.checkpoint?.cosigned?.map((c) => c.witness).sort()).toEqual(['lite', 'ours']);
    const cli = runCli(['verify-proof', '--genesis', genesisFile, ...policyFlags, '-'], JSON.stringify(evidence));
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/2 of 2 trusted witnesses, the policy wants 2/);
  });

  it("Go's x/mod note and tlog verify our log signatures, our witness's cosignature and our proofs", async () => {
    const n0 = cluster.nodes[0] as never;
    const note = (await cluster.get(n0, '/checkpoint')).body as string;
    const parsed = parseCheckpointNote(note);
    if (typeof parsed === 'string') throw new Error(parsed);
    const size = parsed.checkpoint.size;
    const block = (await cluster.get(n0, `/blocks/${size - 1}`)).body as Block;
    const inclusion = (await cluster.get(n0, `/checkpoint/proof?height=${size - 1}&size=${size}`)).body as {
      proof: string[];
      block_hash: string;
    };
    const early = (await cluster.get(n0, `/checkpoint/proof?height=1&size=${size}`)).body as {
      proof: string[];
      block_hash: string;
    };
    expect(inclusion.block_hash).toBe(blockHash(block.header));
    const consistency = (await cluster.get(n0, `/checkpoint/proof?from=${firstWitnessed}&to=${size}`)).body as {
      proof: string[];
    };
    const request = {
      note,
      log_keys: cluster.nodes.map((n) => logVerifierKey(ORIGIN, n.keys.publicKey).text),
      log_quorum: 3,
      witness_keys: [ours.verifierKey, lite.verifierKey],
      inclusion: [
        { index: size - 1, leaf_data: inclusion.block_hash, proof: inclusion.proof },
        { index: 1, leaf_data: early.block_hash, proof: early.proof },
      ],
      consistency:
        firstWitnessed < size ? [{ from: firstWitnessed, from_root: firstRoot, proof: consistency.proof }] : [],
    };
    const verdict = noteVerify(request);
    expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true, origin: ORIGIN, size, errors: [] });
    expect(verdict.log_signatures).toBeGreaterThanOrEqual(3);
    expect(verdict.cosigned.sort()).toEqual(['witness.test/lite', 'witness.test/ours']);
    // Positive control for the negative: the same request with one proof hash changed is refused by Go.
    const wrong = {
      ...request,
      inclusion: [{ ...request.inclusion[0], proof: [...inclusion.proof.slice(0, -1), 'ff'.repeat(32)] }],
    };
    if (inclusion.proof.length > 0) expect(noteVerify(wrong as never).ok).toBe(false);
    expect(noteVerify({ ...request, note: note.replace(/\n(\d+)\n/, (_m, n) => `\n${Number(n) + 1}\n`) }).ok).toBe(
      false,
    );
  });

  it('a split view: another root for a size the witnesses cosigned is refused by both, and by a node', async () => {
    // A second history of `size` blocks, signed by a quorum of the validators' own keys (what two nodes serving
    // different checkpoints for one size amount to).
    const forge = async (size: number) => {
      const other = new LogTree();
      for (let i = 0; i < size - 1; i++)
        other.appendData(
          fromHex(blockHash(((await cluster.get(cluster.nodes[0] as never, `/blocks/${i}`)).body as Block).header)),
        );
      other.appendData(new Uint8Array(32).fill(7));
      const signers = cluster.nodes.slice(0, 3).map((n) => createSigner(n.keys.privateKey));
      return logSignedCheckpoint(
        ORIGIN,
        size,
        other.root(size),
        signers.map((s) => [s.publicKey, (m: Uint8Array) => s.sign(m)] as const),
      );
    };
    const post = (url: string, old: number, checkpoint: string) =>
      fetch(`${url}/add-checkpoint`, {
        method: 'POST',
        body: formatAddCheckpoint({ oldSize: old, proof: [], checkpoint }),
      });
    // The forgery is for the very size our witness holds, read from the witness itself: the chain moves on while the
    // test runs, and a witness that cosigned a newer checkpoint in between answers "old size" instead (409, no
    // conflict). Then the test reads again and forges anew.
    const conflictsBefore = (await ours.info()).conflicts;
    let size = 0;
    let forged = '';
    let oursAnswer: Response | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      size = (await ours.info()).logs.find((l) => l.origin === ORIGIN)?.size ?? 0;
      forged = await forge(size);
      oursAnswer = await post(ours.url, size, forged);
      if ((await ours.info()).conflicts > conflictsBefore) break;
    }
    expect(oursAnswer?.status).toBe(409);
    expect((await ours.info()).conflicts).toBe(conflictsBefore + 1);
    // litewitness holds a size at least as large (both cosign every checkpoint the nodes send): a split view or an
    // old size, refused either way.
    const liteAnswer = await post(lite.url, size, forged);
    expect([409, 422]).toContain(liteAnswer.status);
    // A node shown the forged checkpoint refuses it and counts it.
    const before = Number((await metric(1, 'scriptorium_ledger_checkpoint_conflicts_total')) ?? 0);
    const res = await cluster.post(cluster.nodes[1] as never, '/checkpoint/cosigned', { note: forged });
    expect(res.status).toBe(409);
    expect(JSON.stringify(res.body)).toMatch(/split view/);
    expect(Number(await metric(1, 'scriptorium_ledger_checkpoint_conflicts_total'))).toBe(before + 1);
  });

  it('our witness down: the chain keeps finalizing, the status and metrics show it; back, one consistency proof catches it up', async () => {
    const n0 = cluster.nodes[0] as never;
    const before = await status();
    const sizeBefore = witnessOf(before, 'ours')?.size ?? 0;
    await ours.stop('SIGKILL');
    const h0 = await cluster.height(n0);
    await cluster.post(n0, '/mempool', { records: records('down', 20) });
    await cluster.waitFor(
      'blocks finalized with a witness down',
      () => cluster.height(n0),
      (h) => h >= h0 + 2,
    );
    const down = await cluster.waitFor(
      'the status shows it',
      status,
      (s) => (witnessOf(s, 'ours')?.last_error ?? '').includes('unreachable') && s.witnessed_size < s.size,
    );
    expect(witnessOf(down, 'lite')?.size).toBeGreaterThan(sizeBefore);
    expect(down.unwitnessed_since).not.toBeNull();
    await cluster.waitFor(
      'the lag metric',
      () => metric(0, 'scriptorium_ledger_witness_lag_blocks{witness="ours"}'),
      (v) => Number(v) > 0,
    );
    await sleep(1200);
    expect(Number(await metric(0, 'scriptorium_ledger_checkpoint_unwitnessed_seconds'))).toBeGreaterThan(0);
    // Back: caught up, its first cosignature from the size it held, in one request with one consistency proof.
    await ours.restart();
    const back = await cluster.waitFor(
      'witnessed again',
      status,
      (s) => s.witnessed_size >= down.size && (witnessOf(s, 'ours')?.size ?? 0) >= down.size,
      60_000,
    );
    expect(back.unwitnessed_since === null || back.witnessed_size < back.size).toBe(true);
    // The witness logs through an asynchronous writer: its lines since the restart reach the file a little later.
    type Line = { msg: string; old?: number; size?: number; proof?: number; time: number };
    const readLog = () =>
      readFileSync(join(ours.dir, 'witness.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
    const sinceRestart = await cluster.waitFor(
      'the restarted witness logs its first cosignature',
      async () => {
        const log = readLog();
        const starts = log.filter((l) => l.msg === 'witness started').length;
        return starts >= 2 ? log.slice(log.findLastIndex((l) => l.msg === 'witness started')) : [];
      },
      (lines) => lines.some((l) => l.msg === 'cosigned'),
    );
    const first = sinceRestart.find((l) => l.msg === 'cosigned');
    expect(first, JSON.stringify(sinceRestart)).toMatchObject({ old: sizeBefore });
    expect(first?.size).toBeGreaterThan(sizeBefore + 1);
    expect(first?.proof).toBeGreaterThan(0);
  });

  it('a history rewritten with the same keys: both witnesses refuse it; verify-proof --witness refuses its evidence, saying why', async () => {
    const nodes = cluster.nodes;
    const witnessedBefore = (await status()).witnessed_size;
    const conflictsBefore = (await ours.info()).conflicts;
    for (const n of nodes) await cluster.stop(n, 'SIGKILL');
    // Rebuild from block 2 on: other records, more blocks than there were, each sealed by three of the validators.
    const signers = new Map(nodes.map((n) => [n.keys.publicKey, createSigner(n.keys.privateKey)]));
    const original = BlockStore.open<Block>(join((nodes[0] as { dataDir: string }).dataDir, 'chain')).store;
    const kept = Array.from({ length: 2 }, (_, h) => original.get(h) as Block);
    const length = original.length + 5;
    original.close();
    const rewritten: Block[] = [...kept];
    for (let h = 2; h < length; h++) {
      const parent = rewritten[h - 1] as Block;
      const block = buildBlock({
        chainId: CHAIN,
        height: h,
        parentHash: blockHash(parent.header),
        prevMembershipHeight: membershipPointerAfter(parent.header),
        proposer: (nodes[0] as { keys: { publicKey: string } }).keys.publicKey,
        timestamp: parent.header.timestamp + 10,
        records: [{ id: `rewritten-${h}`, entity: 'urn:test:rewrite', value: h }],
        changes: [],
      });
      const hash = blockHash(block.header);
      const seals = [...signers.values()]
        .slice(0, 3)
        .map((s) => ({ validator: s.publicKey, round: 0, signature: s.sign(sealBytes(CHAIN, h, 0, hash)) }));
      rewritten.push({ ...block, commit_signatures: seals });
    }
    for (const n of nodes) {
      const chainDir = join(n.dataDir, 'chain');
      renameSync(chainDir, join(n.dataDir, 'chain-before-rewrite'));
      const { store } = BlockStore.open<Block>(chainDir);
      for (const b of rewritten) store.append(b.header.height, b);
      store.close();
    }
    await cluster.startAll({
      NODE_WITNESS__WITNESSES: JSON.stringify([
        { name: 'ours', url: ours.url, key: ours.verifierKey },
        { name: 'lite', url: lite.url, key: lite.verifierKey },
      ]),
      NODE_WITNESS__THRESHOLD: '2',
      NODE_CHECKPOINT__INTERVAL_MS: '500',
      NODE_CONSENSUS__EMPTY_BLOCK_INTERVAL_MS: '2000',
    });
    const refused = await cluster.waitFor(
      'both witnesses refuse the rewritten history',
      status,
      (s) => s.witnesses.every((w) => /refuses|another checkpoint|beyond/.test(w.last_error ?? '')),
      60_000,
    );
    expect(refused.witnessed_size).toBe(0);
    for (const w of refused.witnesses) expect(w.last_error).toMatch(/not consistent|another checkpoint|refuses/);
    // What our witness holds did not move: it is still the last checkpoint of the real history it cosigned.
    expect((await ours.info()).logs[0]?.size).toBeGreaterThanOrEqual(witnessedBefore);
    expect((await ours.info()).conflicts).toBeGreaterThan(conflictsBefore);
    // The rewritten chain's own evidence: final by its (the validators') seals, in a checkpoint signed by them, but
    // cosigned by no trusted witness.
    const evidence = (await cluster.get(nodes[0] as never, '/evidence/3/0')).body;
    const res = runCli(['verify-proof', '--genesis', genesisFile, ...policyFlags, '-'], JSON.stringify(evidence));
    expect(res.status).toBe(1);
    expect(res.stderr).toMatch(
      /cosigned by 0 of the 2 trusted witnesses, the policy wants 2 \(ours: no cosignature; lite: no cosignature\)/,
    );
    // Without the policy, the same evidence passes: the seals and log signatures are the validators' own keys.
    expect(runCli(['verify-proof', '--genesis', genesisFile, '-'], JSON.stringify(evidence)).status).toBe(0);
    writeFileSync(join(dir, 'rewritten-evidence.json'), JSON.stringify(evidence));
  });
});
