// The /ui console in headless Debian Chromium against a running 4-node cluster: the board reads every node across
// origins, a block opens, records are verified in the browser from their light evidence and finality certificates
// from the membership blocks below them (valid ones as valid, a tampered record, a certificate below quorum and a seal
// from a non-validator as not valid; a pinned genesis that is not the node's refuses everything), the whole chain is
// verified on request, the tamper feed shows a TAMPERED record the nodes' own watcher produced from a tamper on a
// test broker, and the page's CSP blocks an injected inline script. The shared test vectors get the same verdicts in
// the page as from `ledger-node verify-proof`, and every forged evidence of the vectors, served by a node that lies
// (the real console passed through it), is refused in the page. Screenshots are saved under
// .test-results/ledger-console/.
import { readFileSync } from 'node:fs';
import { LocalCluster, type LocalNode } from '@scriptorium/harness/local-cluster';
import {
  attribute,
  entityId,
  seed,
  setAttribute,
  startTestBroker,
  type TestBroker,
} from '@scriptorium/harness/test-broker';
import { type HostileNode, startHostileNode } from '@scriptorium/harness/test-receivers';
import { type Block, blockHash, type LightEvidence, sealBytes } from '@scriptorium/ledger-protocol';
import { createSigner, generateKeyPair } from '@scriptorium/ledger-protocol/keys';
import vectors from '@scriptorium/ledger-protocol/test-vectors' with { type: 'json' };
import {
  accessibilityViolations,
  hasChromium,
  launchBrowser,
  overflowsHorizontally,
  screenshotDir,
  screenshots,
  VIEWPORTS,
  watchPage,
} from '@scriptorium/test-support/browser';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole } from '../src/console/build.ts';
import { runCli } from './helpers.ts';

const SCREENS = screenshotDir('ledger-console');
let cluster: LocalCluster;
let n0: LocalNode;
let browser: Browser;
let brokers: TestBroker[] = [];
let tampered: Found;

/** Screenshots at laptop and phone widths, after axe-core finds no WCAG 2.1 A/AA violation on the screen. */
async function shot(page: Page, name: string): Promise<void> {
  expect(await accessibilityViolations(page), name).toEqual([]);
  await screenshots(page, SCREENS, name);
}

interface Found {
  height: number;
  index: number;
  record: Record<string, unknown> & { id: string; entity: string; attribute: string };
}

/** The first record on node 0's chain matching `match`, with its place. */
async function findRecord(match: (r: Record<string, unknown>) => boolean): Promise<Found | undefined> {
  const tip = await cluster.height(n0);
  for (let h = 1; h <= tip; h++) {
    const block = (await cluster.get(n0, `/blocks/${h}`)).body as Block;
    const index = block.records.findIndex(match);
    if (index >= 0) return { height: h, index, record: block.records[index] as Found['record'] };
  }
  return undefined;
}

async function open(path: string, base = n0.url): Promise<{ page: Page; seen: Awaited<ReturnType<typeof watchPage>> }> {
  const context = await browser.newContext({ viewport: VIEWPORTS.laptop });
  const page = await context.newPage();
  const seen = await watchPage(page);
  const res = await page.goto(`${base}/ui${path}`);
  expect(res?.status()).toBe(200);
  await page.getByRole('heading', { level: 1, name: 'Ledger console' }).waitFor();
  return { page, seen };
}

/** Pastes JSON into the verifier and returns the verdict it shows. */
async function pasteAndVerify(page: Page, json: unknown): Promise<'valid' | 'invalid'> {
  await page.getByLabel(/Evidence \(GET \/evidence\), a GET \/proof body/).fill(JSON.stringify(json));
  // Editing the JSON clears the previous verdict; the next one is for this input.
  await page.locator('[data-verdict]').waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Verify pasted JSON' }).click();
  return verdict(page);
}

async function verdict(page: Page): Promise<'valid' | 'invalid'> {
  const el = page.locator('[data-verdict]').first();
  await el.waitFor({ timeout: 60_000 });
  return (await el.getAttribute('data-verdict')) as 'valid' | 'invalid';
}

describe.skipIf(!hasChromium)('the /ui console in a browser', () => {
  beforeAll(async () => {
    await buildConsole();
    // The nodes watch a primary and a federated test broker; a tamper on the federated one becomes a TAMPERED
    // record through the node's own watcher.
    const primary = await startTestBroker();
    const federated = await startTestBroker();
    brokers = [primary, federated];
    for (const b of brokers) seed(b, { count: 5, attrs: 2 });
    cluster = await LocalCluster.create({
      size: 4,
      roundTimeoutMs: 1000,
      env: {
        NODE_BROKER__PRIMARY_URL: primary.url,
        NODE_BROKER__FEDERATED_URLS: federated.url,
        NODE_BROKER__POLL_INTERVAL_MS: '1000',
        NODE_SYNC__INTERVAL_MS: '300',
      },
    });
    await cluster.startAll();
    n0 = cluster.nodes[0] as LocalNode;
    await cluster.waitFor(
      'the first pass on the chain',
      () => cluster.height(n0),
      (h) => h >= 1,
      60_000,
    );
    // An ADD and a REMOVE of an extra key (its node never runs; the four are a quorum of five): the record's light
    // evidence then carries two membership blocks, which the page verifies too.
    const extra = generateKeyPair().publicKey;
    for (const [action, size] of [
      ['ADD', 5],
      ['REMOVE', 4],
    ] as const) {
      expect((await cluster.post(n0, '/membership', { changes: [{ action, validator: extra }] })).status).toBe(200);
      await cluster.waitFor(
        `${size} validators`,
        async () => ((await cluster.get(n0, '/chain')).body as { validators: number }).validators,
        (n) => n === size,
        60_000,
      );
    }
    setAttribute(federated, entityId(2), 'temperature', attribute('ngsi-v2', 2, 0, -1021));
    tampered = (await cluster.waitFor(
      'the TAMPERED record on node 0',
      () => findRecord((r) => r.verdict === 'TAMPERED' && r.entity === entityId(2)),
      (f) => f !== undefined,
      60_000,
    )) as Found;
    browser = await launchBrowser();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await cluster?.stopAll();
    for (const b of brokers) await b.close().catch(() => undefined);
  });

  it('the board shows all four nodes with their heights, each read across origins; it fits a phone', async () => {
    const { page, seen } = await open('#/');
    for (const node of cluster.nodes) {
      const row = page.locator(`tr[data-node="${node.nodeId}"]`);
      await row.locator('td[data-field="height"]', { hasText: /^\d[\d,.\s]*$/ }).waitFor({ timeout: 30_000 });
      expect(await row.getByText('yes').count()).toBe(1);
    }
    expect(await page.locator('tr[data-node] >> text=validator').count()).toBe(4);
    await shot(page, 'board');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await overflowsHorizontally(page)).toBe(false);
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.context().close();
  });

  it('opens a block, its records and a record; search by record id finds it', async () => {
    const { height, index } = tampered;
    const { page, seen } = await open('#/blocks');
    await page
      .getByRole('link', { name: String(height), exact: true })
      .first()
      .waitFor();
    await page.getByLabel('Height or record id').fill(tampered.record.id);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: new RegExp(`Record ${index} of block ${height}`) }).waitFor();
    expect(await page.locator('pre.json').textContent()).toContain(tampered.record.id);
    await page.getByRole('link', { name: `block ${height}` }).click();
    // exact: a heading name matches as a case-insensitive substring otherwise, and the record view's own
    // heading ("Record i of block h") would pass before the block view has replaced it.
    await page.getByRole('heading', { name: `Block ${height}`, exact: true }).waitFor();
    expect(await page.locator('table.records tbody tr').count()).toBeGreaterThan(0);
    await shot(page, 'block');
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.context().close();
  });

  it('verifies a record from its light evidence: the real one as valid, a tampered one as invalid', async () => {
    const { height, index } = tampered;
    const genesisHash = blockHash((JSON.parse(readFileSync(cluster.genesisFile, 'utf8')) as Block).header);
    const { page, seen } = await open(`#/verify/proof/${height}/${index}`);
    expect(await verdict(page)).toBe('valid');
    expect(await page.locator('[data-verdict]').textContent()).toMatch(/proof steps? up to merkle_root/);
    // Both membership blocks below the record were checked, each sealed by the set before it.
    expect(await page.locator('[data-verdict] li', { hasText: /^membership block \d+: (ADD|REMOVE) / }).count()).toBe(
      2,
    );
    // Unpinned, the page shows the genesis it used, to compare.
    expect(await page.locator('[data-genesis]').getAttribute('data-genesis')).toBe(genesisHash);
    await shot(page, 'verify-proof');
    const evidence = (await cluster.get(n0, `/evidence/${height}/${index}`)).body as LightEvidence;
    expect(await pasteAndVerify(page, evidence)).toBe('valid');
    const forged = {
      ...evidence,
      proof: { ...evidence.proof, record: { ...evidence.proof.record, observed: { type: 'Number', value: 21 } } },
    };
    expect(await pasteAndVerify(page, forged)).toBe('invalid');
    expect(seen.violations).toEqual([]);
    await page.context().close();

    // Pinned in the address: the cluster's genesis → valid, said to be pinned; another hash → nothing is believed.
    const pinned = await open(`#/verify/proof/${height}/${index}?genesis=${genesisHash}`);
    expect(await verdict(pinned.page)).toBe('valid');
    expect(await pinned.page.locator('[data-verdict]').textContent()).toContain('Verified against the pinned genesis');
    await pinned.page.context().close();
    const other = await open(`#/verify/proof/${height}/${index}?genesis=${'0'.repeat(64)}`);
    expect(await verdict(other.page)).toBe('invalid');
    expect(await other.page.locator('[data-verdict]').textContent()).toContain('not the pinned genesis');
    await other.page.context().close();
  });

  it('verifies the whole chain on request, block by block', async () => {
    const { page, seen } = await open('#/verify');
    await page.getByRole('button', { name: 'Verify the whole chain' }).click();
    expect(await verdict(page)).toBe('valid');
    expect(await page.locator('[data-verdict]').textContent()).toMatch(/each linked to its parent/);
    expect(seen.errors).toEqual([]);
    await page.context().close();
  });

  it('verifies a finality certificate from block 0; below quorum or a seal from a non-validator fails', async () => {
    // The tampered record's block: above the ADD and the REMOVE, so four validators are active there (quorum 3).
    const height = tampered.height;
    const block = (await cluster.get(n0, `/blocks/${height}`)).body as Block;
    const { page, seen } = await open(`#/verify/block/${height}`);
    expect(await verdict(page)).toBe('valid');
    expect(await page.locator('table.seals tbody tr').count()).toBe(block.commit_signatures.length);
    await shot(page, 'verify-finality');
    // Four validators: quorum 3. Keep 2 seals: below quorum.
    const belowQuorum = { ...block, commit_signatures: block.commit_signatures.slice(0, 2) };
    expect(await pasteAndVerify(page, belowQuorum)).toBe('invalid');
    expect(await page.locator('[data-verdict]').textContent()).toMatch(/quorum is 3/);
    // A valid seal, but by a key that is not in the active set.
    const stranger = createSigner(generateKeyPair().privateKey);
    const foreign = {
      validator: stranger.publicKey,
      round: block.commit_signatures[0]?.round ?? 0,
      signature: stranger.sign(
        sealBytes(block.header.chain_id, height, block.commit_signatures[0]?.round ?? 0, blockHash(block.header)),
      ),
    };
    const withStranger = { ...block, commit_signatures: [...block.commit_signatures.slice(1), foreign] };
    expect(await pasteAndVerify(page, withStranger)).toBe('invalid');
    expect(await page.locator('table.seals').textContent()).toContain('not an active validator');
    expect(await pasteAndVerify(page, block)).toBe('valid');
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.context().close();
  });

  it('the tamper feed shows the TAMPERED record the test broker produced, with its entity and a proof link', async () => {
    const { page, seen } = await open('#/tamper');
    const item = page.locator(`li[data-record="${tampered.record.id}"]`);
    await item.waitFor({ timeout: 30_000 });
    const text = await item.textContent();
    expect(text).toContain(tampered.record.entity);
    expect(text).toContain(tampered.record.attribute);
    expect(text).toContain('-1021');
    await shot(page, 'tamper-feed');
    await item.getByRole('link', { name: 'verify its proof' }).click();
    expect(await verdict(page)).toBe('valid');
    expect(seen.violations).toEqual([]);
    await page.context().close();
  });

  it('its Content-Security-Policy blocks an injected inline script (and reports the violation)', async () => {
    const { page, seen } = await open('#/');
    await page.evaluate(`(() => {
      const s = document.createElement('script');
      s.textContent = 'window.__injected = true';
      document.body.appendChild(s);
    })()`);
    await page.waitForFunction('true');
    expect(await page.evaluate('window.__injected === true')).toBe(false);
    await expect.poll(() => seen.violations.length).toBeGreaterThan(0);
    expect(seen.violations[0]).toMatch(/^script-src/);
    await page.context().close();
  });

  it('a node that lies: every forged evidence of the vectors is refused in the page, the real ones accepted', async () => {
    const hostile: HostileNode = await startHostileNode({ genesis: vectors.chain[0] as Block, upstream: n0.url });
    try {
      for (const v of vectors.light) {
        hostile.serve(v);
        const { page } = await open(
          `#/verify/proof/${v.height}/${v.index}?genesis=${vectors.genesis_hash}`,
          hostile.url,
        );
        expect(await verdict(page), v.name).toBe(v.valid ? 'valid' : 'invalid');
        const text = (await page.locator('[data-verdict]').textContent()) ?? '';
        // Served with a swapped body, block 0 itself is refused (its body does not match its header).
        if (v.served_genesis) expect(text, v.name).toContain('merkle_root mismatch');
        else if (v.refusal) expect(text, v.name).toContain(v.refusal);
        await page.context().close();
      }
      // With the reader's witness policy in the address: a checkpoint cosigned by both trusted witnesses is required;
      // a history rewritten with the validators' own keys is refused, saying why.
      const policy = [
        ...vectors.witness_policy.witnesses.map((w) => `witness=${encodeURIComponent(`${w.name}=${w.key}`)}`),
        'threshold=2',
      ].join('&');
      for (const v of vectors.witnessed) {
        hostile.serve(v);
        const { page } = await open(
          `#/verify/proof/${v.height}/${v.index}?genesis=${vectors.genesis_hash}&${policy}`,
          hostile.url,
        );
        expect(await verdict(page), `witnessed: ${v.name}`).toBe(v.valid ? 'valid' : 'invalid');
        const text = (await page.locator('[data-verdict]').textContent()) ?? '';
        if (v.refusal) expect(text, v.name).toContain(v.refusal);
        else expect(text, v.name).toContain('2 of 2 trusted witnesses');
        await page.context().close();
      }
    } finally {
      await hostile.close();
    }
    // 28 pages, each loaded and verified in Chromium: 22 s on an idle machine, over 60 s on CI's loaded one.
  }, 180_000);

  it('the shared test vectors: the page and verify-proof give every vector its verdict', async () => {
    // Through a node whose block 0 is the vectors' genesis (the page verifies against the node's block 0 unpinned).
    const hostile = await startHostileNode({ genesis: vectors.chain[0] as Block, upstream: n0.url });
    const { page } = await open('#/verify', hostile.url);
    const cases = [
      ...vectors.proofs.map((v) => ({ name: `proof: ${v.name}`, input: v.proof as unknown, valid: v.valid })),
      ...vectors.finality.map((v) => ({
        name: `finality: ${v.name}`,
        input: [...vectors.chain.slice(0, v.height), v.block] as unknown,
        valid: v.valid,
      })),
    ];
    for (const c of cases) {
      const cli = runCli(['verify-proof', '-'], JSON.stringify(c.input));
      expect(cli.status, `${c.name}: ${cli.stdout}${cli.stderr}`).toBe(c.valid ? 0 : 1);
      expect(await pasteAndVerify(page, c.input), c.name).toBe(c.valid ? 'valid' : 'invalid');
    }
    // Light evidence pasted: judged against that block 0, as verify-proof --genesis does.
    for (const v of vectors.light.filter((l) => !l.served_genesis))
      expect(await pasteAndVerify(page, v.evidence), v.name).toBe(v.valid ? 'valid' : 'invalid');
    await page.context().close();
    await hostile.close();
  });
});
