// Headless Debian Chromium driven by playwright-core, for the web app's tests and benchmark: launch flags that keep
// it off the network, a CSP-violation collector, and screenshots at laptop and phone widths saved as test artifacts
// (in .test-results/web-screens/, git-ignored). Browser-side code is passed as strings: the repository's Node
// TypeScript has no DOM library.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freePort } from '@scriptorium/test-support';
import type { FastifyInstance } from 'fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { buildWeb } from '../src/web/build.ts';
import { type Harness, type HarnessOptions, startHarness } from './harness.ts';

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

export const SCREENSHOT_DIR = join(import.meta.dirname, '..', '..', '..', '.test-results', 'web-screens');

export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });

/** Builds the app (idempotent; `make test` has usually built it already), so a test file run alone serves it too. */
export const ensureWebBuilt = () => buildWeb();

/** Listens on a free loopback port and returns the base URL. */
export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** A browser context at laptop width, with clipboard access for the copy buttons. */
export async function newContext(browser: Browser, base: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORTS.laptop, baseURL: base, acceptDownloads: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  return context;
}

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

/**
 * Saves a full-page screenshot of the current screen at each width (`<name>-laptop.png`, `<name>-phone.png`) after
 * checking it with axe-core: a screen with an accessibility violation fails the test.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  const violations = await accessibilityViolations(page);
  if (violations.length) throw new Error(`${name}: accessibility violations:\n${violations.join('\n')}`);
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const before = page.viewportSize();
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${width}.png`), fullPage: true });
  }
  if (before) await page.setViewportSize(before);
}

/** True when the page's document is wider than its viewport (something does not fit on a phone). */
export const overflowsHorizontally = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth + 1') as Promise<boolean>;

/**
 * The harness listening on a free loopback port that is also its PUBLIC_BASE_URL (the OAuth callback and the CSRF
 * origin check use it), in development mode (a session cookie without Secure over plain http).
 */
export async function startWebHarness(opts: HarnessOptions = {}): Promise<{ h: Harness; base: string }> {
  await ensureWebBuilt();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const h = await startHarness({
    provider: 'pseudo',
    ...opts,
    env: { PUBLIC_BASE_URL: base, NODE_ENV: 'development', ...opts.env },
  });
  await h.app.listen({ port, host: '127.0.0.1' });
  return { h, base };
}

/** Adds a GitHub user to the local OAuth server (primary verified e-mail `<login>@example.com`). */
export function addGitHubUser(h: Harness, login: string, name: string): string {
  const email = `${login}@example.com`;
  h.github.addUser({
    login,
    id: 700_000 + h.github.users.length,
    name,
    emails: [{ email, primary: true, verified: true }],
  });
  return email;
}

/** Signs in through the page as a person does: the landing page's button, the local GitHub's approval page, back. */
export async function signInThroughPage(page: Page, login: string): Promise<void> {
  if (!page.url().startsWith('http')) await page.goto('/');
  await page.getByRole('link', { name: 'Sign in with GitHub' }).click();
  await page.getByRole('button', { name: new RegExp(`^Sign in as ${login}\\b`) }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** The page's clipboard text (the context has clipboard permissions). */
export const clipboardText = (page: Page): Promise<string> =>
  page.evaluate('navigator.clipboard.readText()') as Promise<string>;
