// The signed-out web app in headless Chromium against the real service on real PostgreSQL: the landing page and the
// public playground (live character counter; 413, 402 and 429 shown as sentences), keyboard use, a phone's width,
// axe-core's WCAG checks (every screenshot of every browser test runs them too), and the strict CSP blocking an
// injected inline script while the app's own files run.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accessibilityViolations,
  ensureWebBuilt,
  hasChromium,
  launchBrowser,
  listen,
  newContext,
  overflowsHorizontally,
  screenshots,
  VIEWPORTS,
  watchPage,
} from './browser.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
let base: string;
let browser: Browser;

describe.skipIf(!hasChromium)('signed-out web app in a browser', () => {
  beforeAll(async () => {
    await ensureWebBuilt();
    h = await startHarness({
      provider: 'pseudo',
      env: {
        RATE_LIMITS: JSON.stringify([{ route: '/api/v1/playground', requestsPerMinute: 4 }]),
        PLAYGROUND__DAILY_BUDGET_MICROS: '100000',
      },
    });
    base = await listen(h.app);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const open = async (): Promise<{ page: Page; seen: Awaited<ReturnType<typeof watchPage>> }> => {
    const context = await newContext(browser, base);
    const page = await context.newPage();
    const seen = await watchPage(page);
    const response = await page.goto('/');
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { level: 1 }).waitFor();
    return { page, seen };
  };

  it('shows the landing page with sign-in, runs under the CSP without a violation, fits a phone', async () => {
    const context = await newContext(browser, base);
    const page = await context.newPage();
    const seen = await watchPage(page);
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    expect((await page.goto('/'))?.status()).toBe(200);
    await page.getByRole('heading', { level: 1 }).waitFor();
    // Everything comes from the service itself: no CDN, no font or analytics host.
    expect(requested.length).toBeGreaterThanOrEqual(3);
    expect(requested.filter((u) => !u.startsWith(`${base}/`))).toEqual([]);
    expect(await page.getByRole('link', { name: 'Sign in with GitHub' }).getAttribute('href')).toBe('/auth/github');
    expect(await page.getByRole('heading', { name: /public playground/ }).isVisible()).toBe(true);
    await screenshots(page, 'landing');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await overflowsHorizontally(page)).toBe(false);
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
    await page.context().close();
  });

  it('has no WCAG A/AA violation axe-core can find, and the check does catch one', async () => {
    const { page } = await open();
    expect(await accessibilityViolations(page)).toEqual([]);
    // The same check on a broken page: an unlabelled field and grey-on-grey text.
    await page.evaluate(`document.getElementById('main').insertAdjacentHTML('beforeend',
      '<input id="unlabelled"><p class="faint">faint</p>');
      document.querySelector('.faint').style.color = '#bbb';`);
    const found = await accessibilityViolations(page);
    expect(found.some((v) => v.startsWith('label: #unlabelled'))).toBe(true);
    expect(found.some((v) => v.startsWith('color-contrast: .faint'))).toBe(true);
    await page.context().close();
  });

  it('translates in the playground with a live counter, by keyboard alone', async () => {
    const { page, seen } = await open();
    const counter = page.getByText(/\/ 500 characters/);
    expect(await counter.textContent()).toBe('0 / 500 characters');
    // Tab order: the skip button, the brand, sign-in, the two links of the intro, then the playground's text box.
    const source = page.getByLabel('Text to translate');
    await source.focus();
    await page.keyboard.type('Save your changes, {name}');
    expect(await counter.textContent()).toBe('25 / 500 characters');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.getAttribute("name")')).toBe('sourceLocale');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Translate');
    await page.keyboard.press('Enter');
    const translation = page.locator('.translation');
    await translation.waitFor();
    // The pseudo provider keeps the ICU argument and marks the rest as translated.
    expect(await translation.textContent()).toContain('{name}');
    expect(await page.getByText(/^Score \d\.\d \/ 5$/).isVisible()).toBe(true);
    expect(await page.getByRole('meter', { name: 'Accuracy score' }).count()).toBe(1);
    await screenshots(page, 'playground-result');
    expect(seen.violations).toEqual([]);
    await page.context().close();
  });

  it('counts characters as the service does (code points) and shows the 413 as a sentence', async () => {
    const { page } = await open();
    const source = page.getByLabel('Text to translate');
    await source.fill('😀'.repeat(500));
    const counter = page.locator('.counter');
    expect(await counter.textContent()).toBe('500 / 500 characters');
    await source.fill('😀'.repeat(501));
    expect(await counter.textContent()).toBe('501 / 500 characters — 1 over the limit');
    expect(await source.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Translate' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      'The text is too long: the playground takes at most 500 characters. Shorten it and try again.',
    );
    await screenshots(page, 'playground-413');
    await page.context().close();
  });

  it('shows the 402 of a spent playground budget, then the 429 of too many requests', async () => {
    const { page } = await open();
    await page.getByLabel('Text to translate').fill('Hello');
    await h.database.query(`UPDATE budget_usage SET spent_micros = 100000 WHERE scope = 'playground'`);
    const button = page.getByRole('button', { name: 'Translate' });
    await button.click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^The playground has used up its budget for today\./);
    await screenshots(page, 'playground-402');
    // Four per minute: a few more clicks reach the limit.
    for (let i = 0; i < 8 && !/^Too many/.test((await alert.textContent()) ?? ''); i++) {
      await button.click();
      await page.locator('button[type=submit]:not([disabled])').waitFor();
    }
    // The window is a minute: a 429 in the first second of a fresh one says "1 minute", later ones the seconds left.
    expect(await alert.textContent()).toMatch(/^Too many requests\. Try again in (\d+ seconds?|1 minute)\.$/);
    await screenshots(page, 'playground-429');
    await page.context().close();
  });

  it('blocks an injected inline script and handler (CSP), while the app keeps working', async () => {
    const context = await newContext(browser, base);
    const page = await context.newPage();
    const seen = await watchPage(page);
    // What a reflected XSS would do: the real page, with its real CSP header, and markup injected into the HTML.
    await page.route('/', async (route) => {
      const response = await route.fetch();
      const html = (await response.text()).replace(
        '<body>',
        `<body><script>window.__injected = 'inline script'</script><img src="/missing.png" onerror="window.__injected = 'handler'">`,
      );
      await route.fulfill({ response, body: html });
    });
    await page.goto('/');
    await page.getByRole('heading', { level: 1 }).waitFor();
    // And markup injected into the live page afterwards.
    await page.evaluate(
      `document.body.insertAdjacentHTML('beforeend', '<img src="/missing.png" onerror="window.__injected = 1">')`,
    );
    await page.waitForTimeout(300);
    expect(await page.evaluate('window.__injected === undefined')).toBe(true);
    const blocked = seen.violations.filter((v) => v.startsWith('script-src'));
    expect(blocked.some((v) => v.startsWith('script-src-elem inline'))).toBe(true);
    expect(blocked.filter((v) => v.startsWith('script-src-attr inline')).length).toBe(2);
    expect(seen.violations.filter((v) => !v.startsWith('script-src'))).toEqual([]);
    // The app's own script still runs: the counter follows typing.
    await page.getByLabel('Text to translate').fill('abc');
    expect(await page.locator('.counter').textContent()).toBe('3 / 500 characters');
    await context.close();
  });
});
