// The web app's browser tests: the shared Chromium helpers (@scriptorium/test-support/browser) with this app's
// screenshot folder (.test-results/web-screens/, git-ignored; every screen checked with axe-core first), and the
// app's own harness, sign-in and browser contexts.
import type { AddressInfo } from 'node:net';
import {
  accessibilityViolations,
  screenshotDir,
  screenshots as screenshotsIn,
  VIEWPORTS,
} from '@scriptorium/test-support/browser';
import { freePort } from '@scriptorium/test-support/ports';
import type { FastifyInstance } from 'fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildWeb } from '../src/web/build.ts';
import { type Harness, type HarnessOptions, startHarness } from './harness.ts';

export {
  accessibilityViolations,
  CHROMIUM,
  CHROMIUM_FLAGS,
  hasChromium,
  launchBrowser,
  overflowsHorizontally,
  VIEWPORTS,
  watchPage,
} from '@scriptorium/test-support/browser';

export const SCREENSHOT_DIR = screenshotDir('web-screens');

/**
 * Saves a full-page screenshot of the current screen at each width (`<name>-laptop.png`, `<name>-phone.png`) after
 * checking it with axe-core: a screen with an accessibility violation fails the test.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  const violations = await accessibilityViolations(page);
  if (violations.length) throw new Error(`${name}: accessibility violations:\n${violations.join('\n')}`);
  await screenshotsIn(page, SCREENSHOT_DIR, name);
}

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
