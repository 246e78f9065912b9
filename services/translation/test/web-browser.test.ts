// GET / in headless Chromium (Debian's, driven by playwright-core): under the strict nonce-based CSP the page's
// own script runs (it lists the endpoints from the OpenAPI document) and the browser reports no CSP violation.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let h: Harness;
let base: string;
beforeAll(async () => {
  h = await startHarness({ provider: 'pseudo' });
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => h?.close());

describe.skipIf(!existsSync(CHROMIUM))('app page in a browser', () => {
  it('runs its nonce-bearing script and nothing violates the CSP', async () => {
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const page = await browser.newPage();
      const violations: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.exposeFunction('reportViolation', (v: string) => violations.push(v));
      // Browser-side code is passed as strings: the repository's TypeScript has no DOM lib.
      await page.addInitScript({
        content: `document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));`,
      });
      const response = await page.goto(`${base}/`);
      expect(response?.status()).toBe(200);
      await page.waitForFunction(`document.querySelectorAll('#endpoints li code').length > 3`, undefined, {
        timeout: 10_000,
      });
      const listed = (await page.evaluate(
        `[...document.querySelectorAll('#endpoints li code')].map((e) => e.textContent)`,
      )) as string[];
      expect(listed).toContain('POST /api/v1/translate');
      // Injected markup with an inline handler (the classic XSS) does not run: no 'unsafe-inline'.
      await page.evaluate(
        `document.body.insertAdjacentHTML('beforeend', '<img src="/missing.png" onerror="window.__injected = true">')`,
      );
      await page.waitForTimeout(500);
      expect(await page.evaluate('window.__injected === true')).toBe(false);
      expect(violations.some((v) => v.includes('script-src'))).toBe(true);
      expect(violations.filter((v) => !v.includes('script-src'))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
