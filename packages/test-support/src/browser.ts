// Headless Debian Chromium driven by playwright-core, for every web page's tests and benchmarks: launch flags that
// keep it off the network, a collector of CSP violations and console errors, axe-core's WCAG 2.1 A/AA check, and
// screenshots at laptop and phone widths saved as test artifacts (under .test-results/, git-ignored). Browser-side code is passed as strings: the
// repository's Node TypeScript has no DOM library.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Without these, Chromium keeps trying the closed network. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const VIEWPORTS = {
  laptop: { width: 1366, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

/** Where tests save screenshots: `.test-results/<folder>` at the repository's root. */
export const screenshotDir = (folder: string) => join(import.meta.dirname, '..', '..', '..', '.test-results', folder);

/** `extraArgs` after the flags above, e.g. `--host-resolver-rules=MAP <host> 127.0.0.1:<port>` for a name without DNS. */
export const launchBrowser = (extraArgs: readonly string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_FLAGS, ...extraArgs] });

/**
 * Collects the page's CSP violations (`directive blockedURI`) and console errors from the first script on.
 * @example const seen = watchPage(page); ...; expect(seen.violations).toEqual([]);
 */
export async function watchPage(page: Page): Promise<{ violations: string[]; errors: string[] }> {
  const seen = { violations: [] as string[], errors: [] as string[] };
  await page.exposeFunction('__reportViolation', (v: string) => seen.violations.push(v));
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => window.__reportViolation(e.violatedDirective + ' ' + e.blockedURI));`,
  });
  page.on('pageerror', (e) => seen.errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) seen.errors.push(m.text());
  });
  return seen;
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The WCAG 2.1 A and AA violations axe-core finds on the current screen (labels, names, contrast, landmarks, ARIA), as
 * `rule: selectors`. axe is loaded through the DevTools protocol, which the page's CSP does not govern.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  return (await page.evaluate(`axe
    .run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })
    .then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`)) as string[];
}

/** Saves a full-page screenshot of the current screen at each width into `dir`: `<name>-laptop.png`, `<name>-phone.png`. */
export async function screenshots(page: Page, dir: string, name: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const before = page.viewportSize();
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    await page.screenshot({ path: join(dir, `${name}-${width}.png`), fullPage: true });
  }
  if (before) await page.setViewportSize(before);
}

/** True when the page's document is wider than its viewport (something does not fit on a phone). */
export const overflowsHorizontally = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1') as Promise<boolean>;
