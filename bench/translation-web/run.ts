// Web app benchmark: the size of what the page loads at start (gzip and brotli, target < 150 KB gzipped) and the time
// to interactive in headless Chromium: navigation start → the app's `scriptorium:interactive` mark (first screen
// rendered with its data, see web/src/lib/timing.ts), cold (new browser context, empty cache) and warm (a new visit
// with the immutable files cached), for the signed-out landing page and the signed-in home (the usage overview of an
// organization with a week of usage: /api/v1/me, then /api/v1/orgs/:id/usage). The service runs as its own process
// (`main.ts serve`) on real PostgreSQL with the pseudo provider; the signed-in browser carries a session made in the
// database as the sign-in callback makes it. Bounded: RUNS loads per scenario (default 15; BENCH_QUICK=1: 5). Prints
// figures and writes bench/results/translation-web.json.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, startTestPostgres } from '@scriptorium/test-support';
import { CHROMIUM, hasChromium, launchBrowser } from '@scriptorium/test-support/browser';
import { freePort } from '@scriptorium/test-support/ports';
import {
  createOrganization,
  createSession,
  ensureUser,
  issueApiKey,
  migrate,
  openDatabase,
  SESSION_COOKIE,
} from '@scriptorium/translation';
import { buildWeb } from '@scriptorium/translation/web';
import type { Manifest } from '@scriptorium/web-build';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startService, stopService, unlimited } from '../translation-service.ts';

const root = join(import.meta.dirname, '..', '..');
const RUNS = Number(process.env.RUNS ?? (process.env.BENCH_QUICK === '1' ? 5 : 15));
const TARGET_GZIP_BYTES = 150 * 1024;
const MARK = 'scriptorium:interactive';

if (!hasChromium) {
  console.error(`bench/translation-web: ${CHROMIUM} is missing (apt-get install chromium)`);
  process.exit(2);
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  const r = (n: number) => Math.round(n * 10) / 10;
  return { runs: s.length, min: r(s[0]!), p50: r(q(0.5)), max: r(s[s.length - 1]!) };
};

function bundleFigures(manifest: Manifest) {
  const entry = manifest.entries.app!;
  const files = [entry.script, ...entry.preload, ...entry.styles];
  const sum = (k: 'bytes' | 'gzipBytes' | 'brotliBytes') => files.reduce((n, f) => n + manifest.files[f]![k], 0);
  return {
    files: Object.fromEntries(files.map((f) => [f, manifest.files[f]])),
    atStart: { bytes: sum('bytes'), gzipBytes: sum('gzipBytes'), brotliBytes: sum('brotliBytes') },
    lazyChunks: Object.keys(manifest.files).filter((f) => !files.includes(f)).length,
    targetGzipBytes: TARGET_GZIP_BYTES,
    withinTarget: sum('gzipBytes') < TARGET_GZIP_BYTES,
  };
}

/** Loads `url` and reads the app's timings; `requests` counts the answers that came over the network, not from cache. */
async function load(page: Page, url: string, again: boolean) {
  let requests = 0;
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  // Answers from the memory cache raise no responseReceived at all; from the disk cache they are flagged.
  cdp.on('Network.responseReceived', (e) => {
    if (!e.response.fromDiskCache && !e.response.fromPrefetchCache && !e.response.fromServiceWorker) requests++;
  });
  // A second visit in the same context (a new navigation, as following a link or bookmark; not a reload, which
  // revalidates on purpose).
  if (again) await page.goto('about:blank');
  await page.goto(url, { waitUntil: 'load' });
  // Polled through the DevTools protocol: the page's CSP (rightly) refuses the eval waitForFunction would need.
  for (let i = 0; !(await page.evaluate(`performance.getEntriesByName('${MARK}').length > 0`)); i++) {
    if (i > 600) throw new Error(`no ${MARK} mark within 30 s at ${page.url()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const t = (await page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const fcp = performance.getEntriesByName('first-contentful-paint')[0];
    return {
      interactive: performance.getEntriesByName('${MARK}')[0].startTime,
      firstContentfulPaint: fcp ? fcp.startTime : null,
      domContentLoaded: nav.domContentLoadedEventEnd,
    };
  })()`)) as { interactive: number; firstContentfulPaint: number | null; domContentLoaded: number };
  await cdp.detach();
  return { ...t, requests };
}

async function scenario(
  browser: Browser,
  name: string,
  url: string,
  prepare?: (context: BrowserContext) => Promise<void>,
) {
  const cold: Awaited<ReturnType<typeof load>>[] = [];
  const warm: Awaited<ReturnType<typeof load>>[] = [];
  for (let i = 0; i < RUNS; i++) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    await prepare?.(context);
    const page = await context.newPage();
    cold.push(await load(page, url, false));
    warm.push(await load(page, url, true));
    await context.close();
  }
  const pick = (xs: typeof cold, k: 'interactive' | 'domContentLoaded') => stats(xs.map((x) => x[k]));
  const result = {
    cold: {
      timeToInteractiveMs: pick(cold, 'interactive'),
      domContentLoadedMs: pick(cold, 'domContentLoaded'),
      firstContentfulPaintMs: stats(cold.map((x) => x.firstContentfulPaint ?? Number.NaN)),
      requests: stats(cold.map((x) => x.requests)),
    },
    warm: {
      timeToInteractiveMs: pick(warm, 'interactive'),
      requests: stats(warm.map((x) => x.requests)),
    },
  };
  console.log(
    `  ${name}: time to interactive cold p50 ${result.cold.timeToInteractiveMs.p50} ms ` +
      `(min ${result.cold.timeToInteractiveMs.min}, max ${result.cold.timeToInteractiveMs.max}; ` +
      `${result.cold.requests.p50} requests), warm p50 ${result.warm.timeToInteractiveMs.p50} ms ` +
      `(${result.warm.requests.p50} requests)`,
  );
  return result;
}

const started = Date.now();
const loadBefore = loadavg()[0]!;
const buildStart = performance.now();
const { manifest } = await buildWeb();
const buildMs = Math.round(performance.now() - buildStart);
const bundle = bundleFigures(manifest);
console.log(
  `  bundle at start: ${bundle.atStart.bytes} B, ${(bundle.atStart.gzipBytes / 1024).toFixed(1)} KiB gzip, ` +
    `${(bundle.atStart.brotliBytes / 1024).toFixed(1)} KiB brotli (target < 150 KiB gzip: ${bundle.withinTarget ? 'met' : 'MISSED'}); build ${buildMs} ms`,
);

const pg = await startTestPostgres();
const testDb = await createTestDatabase(pg.url, 'bench_web');
let service: ChildProcess | undefined;
let browser: Browser | undefined;
try {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // A signed-in user with an organization; its usage comes from real translate calls below.
  const database = await openDatabase(testDb.url);
  await migrate(database);
  const userId = await ensureUser(database, 'bench-web@example.com');
  const orgId = await createOrganization(database, { name: 'Bench', planId: 'team', ownerId: userId });
  const { apiKey } = await issueApiKey(database, { userId, orgId, defaultPlan: 'team', actor: 'operator' });
  const sessions = await Promise.all(
    Array.from({ length: RUNS }, () =>
      createSession(database, userId, Date.now(), { absoluteMs: 3_600_000, idleMs: 3_600_000 }),
    ),
  );
  await database.close();
  service = await startService({
    databaseUrl: testDb.url,
    port,
    env: { RATE_LIMITS: unlimited(['/', '/assets/:file', '/api/v1/me', '/api/v1/orgs/:id/usage'], 100_000) },
  });
  browser = await launchBrowser();
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${base}/api/v1/translate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sourceLocale: 'en',
        targetLocale: i % 2 ? 'de' : 'fr',
        tier: i % 3 ? 'cheap' : 'top',
        items: [{ id: 'a', text: `Your changes to {project} were saved ${i} minutes ago` }],
        style: {},
        glossary: [],
      }),
    });
    if (!res.ok) throw new Error(`seeding usage: translate answered ${res.status}`);
  }
  const landing = await scenario(browser, 'signed-out landing', `${base}/`);
  let next = 0;
  const home = await scenario(browser, 'signed-in home (usage overview)', `${base}/`, async (context) => {
    const { token } = sessions[next++]!;
    await context.addCookies([{ name: SESSION_COOKIE, value: token, url: base, httpOnly: true, sameSite: 'Lax' }]);
  });
  const loadAfter = loadavg()[0]!;
  const result = {
    machine: { cpus: cpus().length, loadavg_1m_before: loadBefore, loadavg_1m_after: loadAfter },
    at: new Date(started).toISOString(),
    browser: 'Debian chromium, headless, playwright-core; 1366×860; no CPU or network throttling (loopback)',
    buildMs,
    bundle,
    timeToInteractive: { landing, signedInHome: home },
  };
  writeFileSync(join(root, 'bench/results/translation-web.json'), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`  load average ${loadBefore.toFixed(2)} → ${loadAfter.toFixed(2)}; bench/results/translation-web.json`);
} finally {
  await browser?.close();
  await stopService(service);
  await testDb.drop();
  await pg.stop();
}
