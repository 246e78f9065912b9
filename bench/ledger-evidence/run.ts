// BENCH=ledger-evidence: what it costs a third party to check one record, with light evidence (GET /evidence) and
// with the full-chain walk it replaces, side by side in one run. 4 validator processes on loopback take
// BENCH_RECORDS (1,000,000) synthetic records, while an extra validator key is added and removed in turn
// (BENCH_CHANGES membership changes, 12). Then, for a record of the last block and one of block 1:
//   - evidence size (bytes served) against the whole chain's bytes up to that block;
//   - verification alone (ledger-protocol's verifyLightEvidence on parsed evidence; node:crypto and @noble), against
//     ChainVerifier over every block (parse included, the network not);
//   - `ledger-node verify-proof --genesis` as a whole process;
//   - the /ui console in headless Chromium, from opening #/verify/proof/H/I to the verdict (cold profile and warm),
//     against its "Verify the whole chain" button.
// Targets (the issue): evidence ≤ 24 KB, verification ≤ 20 ms, the CLI ≤ 300 ms, the console ≤ 500 ms.
// Writes bench/results/ledger-evidence.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { buildConsole } from '@scriptorium/ledger-node/console';
import {
  Block,
  blockHash,
  ChainVerifier,
  type LightEvidence,
  MEMPOOL_METRIC,
  nobleSha256,
  nobleVerify,
  verifyLightEvidence,
} from '@scriptorium/ledger-protocol';
import { generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import { hasChromium, launchBrowser } from '@scriptorium/test-support/browser';
import type { Page } from 'playwright-core';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 1_000_000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 12);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const CLI = join(import.meta.dirname, '..', '..', 'services', 'ledger-node', 'src', 'main.ts');
const TARGET = { evidence_bytes: 24 * 1024, verify_ms: 20, cli_ms: 300, console_ms: 500 };

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  const r = (v: number) => Math.round(v * 100) / 100;
  return { median_ms: r(at(0.5)), min_ms: r(s[0] ?? 0), max_ms: r(s.at(-1) ?? 0), runs: s.length };
};
const load = () => Number((loadavg()[0] ?? 0).toFixed(2));
const loadAtStart = load();

const cluster = await LocalCluster.create({
  size: 4,
  debugApi: true,
  roundTimeoutMs: 2000,
  env: { LOG_LEVEL: 'warn' },
});
const work = mkdtempSync(join(tmpdir(), 'bench-evidence-'));
try {
  await cluster.startAll();
  const n0 = cluster.nodes[0] as LocalNode;
  const genesisFile = cluster.genesisFile;
  const genesis = Block.parse(JSON.parse(readFileSync(genesisFile, 'utf8')));
  const genesisHash = blockHash(genesis.header);
  const chain = async () => (await cluster.get(n0, '/chain')).body as { height: number; validators: number };
  const waitValidators = (n: number) =>
    cluster.waitFor('the change in effect', chain, (c) => c.validators === n, 120_000);

  // Records in chunks, with an ADD or a REMOVE of an extra validator key between them (its node never runs: the
  // four others are a quorum of five). Block 1 holds the first chunk's first records.
  const extra = generateKeyPair().publicKey;
  const chunk = Math.ceil(RECORDS / (CHANGES + 1));
  const mempool = async () => {
    const text = String((await cluster.get(n0, '/metrics')).body);
    return Number(new RegExp(`^${MEMPOOL_METRIC} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  };
  let submitted = 0;
  let changes = 0;
  const startedAt = performance.now();
  while (submitted < RECORDS) {
    for (let left = Math.min(chunk, RECORDS - submitted); left > 0; ) {
      // The mempool holds 200,000 records by default and drops what exceeds it: submit while it has room.
      await cluster.waitFor('room in the mempool', mempool, (n) => n <= 100_000, 600_000);
      const count = Math.min(left, 50_000);
      const res = await cluster.post(n0, `/admin/submit?count=${count}`, {});
      const accepted = (res.body as { accepted?: number }).accepted;
      if (res.status !== 200 || accepted !== count)
        throw new Error(`submit: ${res.status} ${JSON.stringify(res.body)} (of ${count})`);
      left -= count;
      submitted += count;
    }
    if (changes < CHANGES) {
      const action = changes % 2 === 0 ? 'ADD' : 'REMOVE';
      const res = await cluster.post(n0, '/admin/validator', { action, validator: extra });
      if (res.status !== 200) throw new Error(`membership: ${res.status} ${JSON.stringify(res.body)}`);
      await waitValidators(action === 'ADD' ? 5 : 4);
      changes++;
    }
    console.log(`${submitted} records submitted, ${changes} membership changes in effect`);
  }
  await cluster.waitFor('every record final', mempool, (n) => n === 0, 1_200_000);
  const ingestSeconds = (performance.now() - startedAt) / 1000;
  const tip = (await chain()).height;

  // The chain as a full walk fetches it: every block's JSON as served, kept for the walk below.
  const blocksText = new Map<number, string>();
  let lastWithRecords = 0;
  let firstWithRecords = 0;
  let chainBytes = 0;
  const bytesUpTo: number[] = [];
  let finalRecords = 0;
  let membershipBlocks = 0;
  for (let h = 0; h <= tip; h++) {
    const text = JSON.stringify((await cluster.get(n0, `/blocks/${h}`)).body);
    blocksText.set(h, text);
    chainBytes += Buffer.byteLength(text);
    bytesUpTo.push(chainBytes);
    const b = JSON.parse(text) as Block;
    finalRecords += b.records.length;
    if (h > 0 && b.validator_changes.length > 0) membershipBlocks++;
    if (b.records.length > 0) {
      lastWithRecords = h;
      if (firstWithRecords === 0) firstWithRecords = h;
    }
  }
  if (finalRecords !== RECORDS) throw new Error(`${finalRecords} records on the chain, not ${RECORDS}`);
  console.log(
    `chain: ${tip} blocks, ${finalRecords} records, ${membershipBlocks} membership blocks, ${(chainBytes / 1e6).toFixed(1)} MB; ingest ${ingestSeconds.toFixed(0)} s`,
  );

  const evidenceOf = async (height: number, index: number) => {
    const res = await cluster.get(n0, `/evidence/${height}/${index}`);
    if (res.status !== 200) throw new Error(`/evidence/${height}/${index}: ${res.status}`);
    const text = JSON.stringify(res.body);
    return { text, evidence: res.body as LightEvidence };
  };
  const lastBlock = (await cluster.get(n0, `/blocks/${lastWithRecords}`)).body as Block;
  const targets = [
    { label: 'a record of the last block', height: lastWithRecords, index: lastBlock.records.length - 1 },
    { label: 'a record of the first block', height: firstWithRecords, index: 0 },
  ];

  const perTarget = [];
  for (const t of targets) {
    const { text, evidence } = await evidenceOf(t.height, t.index);
    const file = join(work, `evidence-${t.height}.json`);
    writeFileSync(file, text);
    const check = verifyLightEvidence(evidence, genesis);
    if (!check.ok) throw new Error(`the evidence does not verify: ${check.lines.at(-1)}`);
    const timeVerify = (noble: boolean) => {
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const parsed = JSON.parse(text);
        const t0 = performance.now();
        const r = noble
          ? verifyLightEvidence(parsed, genesis, nobleVerify, nobleSha256)
          : verifyLightEvidence(parsed, genesis);
        times.push(performance.now() - t0);
        if (!r.ok) throw new Error('verification failed');
      }
      return stats(times.slice(10));
    };
    const cli: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [CLI, 'verify-proof', '--genesis', genesisFile, file], {
        encoding: 'utf8',
      });
      cli.push(performance.now() - t0);
      if (r.status !== 0) throw new Error(`verify-proof: ${r.stderr}`);
    }
    const entry = {
      label: t.label,
      height: t.height,
      index: t.index,
      membership_blocks: evidence.membership.length,
      evidence_bytes: Buffer.byteLength(text),
      chain_bytes_to_block: bytesUpTo[t.height] as number,
      verify_node_crypto: timeVerify(false),
      verify_noble: timeVerify(true),
      cli_process: stats(cli),
    };
    console.log(
      `${t.label} (block ${t.height}): evidence ${entry.evidence_bytes} B with ${entry.membership_blocks} membership blocks (chain to it ${(entry.chain_bytes_to_block / 1e6).toFixed(1)} MB); verify ${entry.verify_node_crypto.median_ms} ms (noble ${entry.verify_noble.median_ms} ms); verify-proof process ${entry.cli_process.median_ms} ms`,
    );
    perTarget.push(entry);
  }

  // The full-chain walk a verifier did before: every block from 0 to the record's, parsed and checked in order
  // (timed on the text already fetched: the network is not counted).
  const fullWalk = (() => {
    const t0 = performance.now();
    let parseMs = 0;
    let verifier: ChainVerifier | undefined;
    for (let h = 0; h <= lastWithRecords; h++) {
      const p0 = performance.now();
      const parsed = Block.parse(JSON.parse(blocksText.get(h) as string));
      parseMs += performance.now() - p0;
      if (h === 0) verifier = new ChainVerifier(parsed);
      else {
        const step = (verifier as ChainVerifier).add(parsed);
        if (!step.ok) throw new Error(`walk: block ${h}: ${step.reason}`);
      }
    }
    return { blocks: lastWithRecords + 1, total_ms: Math.round(performance.now() - t0), parse_ms: Math.round(parseMs) };
  })();
  blocksText.clear();
  console.log(`full-chain walk to block ${lastWithRecords}: ${fullWalk.total_ms} ms (${fullWalk.parse_ms} ms parsing)`);

  // The console in headless Chromium: #/verify/proof/H/I to its verdict, cold (new profile) and warm.
  let consoleResult: Record<string, unknown> = { skipped: 'no Chromium at /usr/bin/chromium' };
  if (hasChromium) {
    await buildConsole();
    const browser = await launchBrowser();
    try {
      const t = targets[0] as (typeof targets)[0];
      const url = `${n0.url}/ui#/verify/proof/${t.height}/${t.index}?genesis=${genesisHash}`;
      const verdict = async (page: Page) => {
        const el = page.locator('[data-verdict]').first();
        await el.waitFor({ timeout: 600_000 });
        if ((await el.getAttribute('data-verdict')) !== 'valid') throw new Error('the console did not say valid');
      };
      const cold: number[] = [];
      const warm: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
        const page = await context.newPage();
        let t0 = performance.now();
        await page.goto(url);
        await verdict(page);
        cold.push(performance.now() - t0);
        await page.goto('about:blank');
        t0 = performance.now();
        await page.goto(url);
        await verdict(page);
        warm.push(performance.now() - t0);
        await context.close();
      }
      // The whole-chain walk in the same page, once (what #/verify/proof did before light evidence).
      const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
      const page = await context.newPage();
      await page.goto(`${n0.url}/ui#/verify`);
      await page.getByRole('button', { name: 'Verify the whole chain' }).waitFor();
      const t0 = performance.now();
      await page.getByRole('button', { name: 'Verify the whole chain' }).click();
      await page.locator('[data-verdict]').first().waitFor({ timeout: 1_800_000 });
      const wholeChainMs = Math.round(performance.now() - t0);
      await context.close();
      consoleResult = { evidence: { cold: stats(cold), warm: stats(warm) }, whole_chain_ms: wholeChainMs };
      console.log(
        `console: evidence cold ${stats(cold).median_ms} ms, warm ${stats(warm).median_ms} ms; whole chain ${wholeChainMs} ms`,
      );
    } finally {
      await browser.close();
    }
  }

  const last = perTarget[0] as (typeof perTarget)[0];
  const consoleCold = (consoleResult.evidence as { cold?: { median_ms: number } } | undefined)?.cold?.median_ms;
  const results = {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
    load_average: { start: loadAtStart, end: load() },
    chain: {
      records: finalRecords,
      blocks: tip,
      membership_blocks: membershipBlocks,
      bytes: chainBytes,
      ingest_seconds: Math.round(ingestSeconds),
    },
    targets: TARGET,
    evidence: perTarget,
    full_chain_walk: fullWalk,
    console: consoleResult,
    ratios: {
      bytes_full_chain_over_evidence: Math.round(last.chain_bytes_to_block / last.evidence_bytes),
      verify_full_chain_over_evidence: Math.round(
        fullWalk.total_ms / Math.max(0.01, last.verify_node_crypto.median_ms),
      ),
      console_whole_chain_over_evidence:
        consoleCold && typeof consoleResult.whole_chain_ms === 'number'
          ? Math.round((consoleResult.whole_chain_ms as number) / consoleCold)
          : null,
    },
    met: {
      evidence_bytes: perTarget.every((e) => e.evidence_bytes <= TARGET.evidence_bytes),
      verify_ms: perTarget.every((e) => e.verify_node_crypto.median_ms <= TARGET.verify_ms),
      cli_ms: perTarget.every((e) => e.cli_process.median_ms <= TARGET.cli_ms),
      console_ms: consoleCold !== undefined ? consoleCold <= TARGET.console_ms : null,
    },
  };
  const dir = join(import.meta.dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'ledger-evidence.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `wrote bench/results/ledger-evidence.json (load ${results.load_average.start} → ${results.load_average.end})`,
  );
  console.log(JSON.stringify(results.ratios), JSON.stringify(results.met));
} finally {
  rmSync(work, { recursive: true, force: true });
  await cluster.stopAll();
}
