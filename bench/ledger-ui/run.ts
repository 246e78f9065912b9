// BENCH=ledger-ui: the /ui console in headless Chromium against 4 validator processes on loopback. Measures the
// bundle the page loads at start (gzip; target under 200 KB), the time to first render of the cluster board (every
// node's height shown, each read across origins) and of a 2,000-record block (its first rows shown; and all 2,000),
// cold (a fresh browser profile) and warm (cached files). Writes bench/results/ledger-ui.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import { buildConsole } from '@scriptorium/ledger-node/console';
import type { Block } from '@scriptorium/ledger-protocol';
import { hasChromium, launchBrowser } from '@scriptorium/test-support/browser';
import { entryGzipBytes } from '@scriptorium/web-build/build';
import type { Browser, Page } from 'playwright-core';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const RECORDS = 2000;

if (!hasChromium) {
  console.error('bench/ledger-ui: no Chromium at /usr/bin/chromium');
  process.exit(2);
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return { median_ms: Math.round(at(0.5)), min_ms: Math.round(s[0] ?? 0), max_ms: Math.round(s.at(-1) ?? 0) };
};

/** Navigates and returns the milliseconds from the navigation's start until `ready` holds. */
async function timeTo(page: Page, url: string, ready: (page: Page) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await page.goto(url);
  await ready(page);
  return performance.now() - started;
}

const loadAtStart = loadavg()[0] ?? 0;
const { manifest } = await buildConsole();
const bundleGzip = entryGzipBytes(manifest, 'console');
console.log(`bundle at start: ${(bundleGzip / 1024).toFixed(1)} KiB gzip (target < 200 KB)`);

const cluster = await LocalCluster.create({
  size: 4,
  roundTimeoutMs: 2000,
  env: { LOG_LEVEL: 'warn', NODE_CONSENSUS__MAX_BLOCK_RECORDS: String(RECORDS), MAX_BODY_BYTES: String(32 << 20) },
});
let browser: Browser | undefined;
try {
  await cluster.startAll();
  const n0 = cluster.nodes[0] as LocalNode;
  // One POST of 2,000 records: the proposer takes them in one block.
  const records = Array.from({ length: RECORDS }, (_, i) => ({
    id: `bench-ui-${i}`,
    broker: 'https://federated.example:1026',
    entity: `urn:ngsi-ld:Sensor:${String(i).padStart(6, '0')}`,
    entity_type: 'Sensor',
    attribute: 'temperature',
    observed: { type: 'Number', value: i },
    verdict: i % 50 === 0 ? 'TAMPERED' : 'OK',
    seq: 0,
  }));
  await cluster.post(n0, '/mempool', { records });
  const big = await cluster.waitFor(
    'a block holding the records',
    async () => {
      const tip = await cluster.height(n0);
      let best: { height: number; count: number } = { height: 0, count: 0 };
      for (let h = 1; h <= tip; h++) {
        const count = ((await cluster.get(n0, `/blocks/${h}`)).body as Block).records.length;
        if (count > best.count) best = { height: h, count };
      }
      return best;
    },
    (b) => b.count >= RECORDS * 0.9,
    120_000,
  );
  console.log(`block ${big.height} holds ${big.count} records`);

  browser = await launchBrowser();
  const measure = async (label: string, path: string, ready: (page: Page) => Promise<unknown>) => {
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const context = await (browser as Browser).newContext({ viewport: { width: 1366, height: 860 } });
      const page = await context.newPage();
      cold.push(await timeTo(page, `${n0.url}/ui${path}`, ready));
      await page.goto('about:blank');
      warm.push(await timeTo(page, `${n0.url}/ui${path}`, ready));
      await context.close();
    }
    const result = { cold: stats(cold), warm: stats(warm) };
    console.log(`${label}: cold ${JSON.stringify(result.cold)} warm ${JSON.stringify(result.warm)}`);
    return result;
  };

  const board = await measure('board (every node with its height)', '#/', async (page) => {
    for (const node of cluster.nodes)
      await page
        .locator(`tr[data-node="${node.nodeId}"] td[data-field="height"]`, { hasText: /^\d/ })
        .waitFor({ timeout: 60_000 });
  });
  const blockFirstRows = await measure(`block of ${big.count} records (first rows)`, `#/blocks/${big.height}`, (page) =>
    page.locator('table.records tbody tr').first().waitFor({ timeout: 60_000 }),
  );
  const blockAll = await measure(`block of ${big.count} records (all rows)`, `#/blocks/${big.height}`, async (page) => {
    const more = page.getByRole('button', { name: /^Show more/ });
    await page.locator('table.records tbody tr').first().waitFor({ timeout: 60_000 });
    while (await more.count()) await more.click();
    await page
      .locator('table.records tbody tr')
      .nth(big.count - 1)
      .waitFor({ timeout: 60_000 });
  });

  const results = {
    at: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version },
    load_average: { start: Number(loadAtStart.toFixed(2)), end: Number((loadavg()[0] ?? 0).toFixed(2)) },
    runs: RUNS,
    bundle: { gzip_bytes_at_start: bundleGzip, target_bytes: 200_000, met: bundleGzip < 200_000 },
    board_first_render: board,
    block: { height: big.height, records: big.count, first_rows: blockFirstRows, all_rows: blockAll },
  };
  const dir = join(import.meta.dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'ledger-ui.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(
    `wrote bench/results/ledger-ui.json (load average ${results.load_average.start} → ${results.load_average.end})`,
  );
} finally {
  await browser?.close();
  await cluster.stopAll();
}
