// The signed-in web app in headless Chromium against the real service on real PostgreSQL, signing in through the local
// GitHub-compatible OAuth server: organizations (create, switch), members (invite with the link to copy, a second
// browser accepting it, role change and removal where the role table allows), API keys (create with the secret shown
// once and copied, a translation through the try-out form, revoke, then 401), usage, the translation memory's switch
// and count, sign-out. Screenshots of each
// screen at laptop and phone widths.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addGitHubUser,
  clipboardText,
  hasChromium,
  launchBrowser,
  newContext,
  overflowsHorizontally,
  screenshots,
  signInThroughPage,
  startWebHarness,
  VIEWPORTS,
  watchPage,
} from './browser.ts';
import type { Harness } from './harness.ts';

let h: Harness;
let base: string;
let browser: Browser;
let ada: { context: BrowserContext; page: Page; seen: Awaited<ReturnType<typeof watchPage>> };
let inviteLink: string;
let apiKey: string;

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();

describe.skipIf(!hasChromium)('signed-in web app: organizations, members, keys, try-out, usage', () => {
  beforeAll(async () => {
    ({ h, base } = await startWebHarness());
    addGitHubUser(h, 'ada', 'Ada Lovelace');
    addGitHubUser(h, 'grace', 'Grace Hopper');
    browser = await launchBrowser();
    const context = await newContext(browser, base);
    const page = await context.newPage();
    ada = { context, page, seen: await watchPage(page) };
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('signs in with GitHub; a new user is asked to create an organization', async () => {
    const { page } = ada;
    await page.goto('/');
    await signInThroughPage(page, 'ada');
    await page.getByRole('heading', { level: 1, name: 'Welcome, Ada Lovelace' }).waitFor();
    await page.getByText('You do not belong to an organization yet.').waitFor();
    expect(await page.getByLabel('Organization', { exact: true }).count()).toBe(0);
    await screenshots(page, 'overview-no-organization');
  });

  it('creates organizations, the new one selected; the switcher moves between them', async () => {
    const { page } = ada;
    await page.getByRole('link', { name: 'Create one' }).click();
    await page.getByRole('heading', { level: 1, name: 'Organizations' }).waitFor();
    for (const name of ['Beta Docs', 'Acme Translations']) {
      await page.getByLabel('Name').fill(name);
      await page.getByRole('button', { name: 'Create organization' }).click();
      await page.getByText(`Created ${name}; it is now the selected organization.`).waitFor();
    }
    const switcher = page.getByLabel('Organization', { exact: true });
    expect(await switcher.locator('option:checked').textContent()).toBe('Acme Translations (owner)');
    expect(
      await page
        .getByRole('row', { name: /Acme Translations/ })
        .getByRole('cell')
        .first()
        .textContent(),
    ).toBe('owner');
    await screenshots(page, 'organizations');
    await switcher.selectOption({ label: 'Beta Docs (owner)' });
    await page.getByRole('button', { name: 'Switch to Acme Translations' }).waitFor();
    await page.getByRole('button', { name: 'Switch to Acme Translations' }).click();
    expect(await switcher.locator('option:checked').textContent()).toBe('Acme Translations (owner)');
    await page.getByRole('button', { name: 'Switch to Beta Docs' }).waitFor();
  });

  it('invites by e-mail and shows the link to copy', async () => {
    const { page } = ada;
    await nav(page, 'Members');
    await page.getByRole('heading', { name: 'Members of Acme Translations' }).waitFor();
    await page.getByRole('row', { name: /ada@example\.com/ }).waitFor();
    await page.getByLabel('E-mail address').fill('grace@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('member');
    await page.getByRole('button', { name: 'Create invitation' }).click();
    const link = page.locator('code.secret');
    await link.waitFor();
    inviteLink = (await link.textContent())!;
    expect(inviteLink).toMatch(new RegExp(`^${base}/\\?invite=[A-Za-z0-9_-]{20,}$`));
    await page.getByRole('button', { name: 'Copy the link' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await clipboardText(page)).toBe(inviteLink);
    await page.getByText('grace@example.com (member), expires').waitFor();
    await screenshots(page, 'members-invite');
  });

  it('a second browser opens the link, signs in and accepts the invitation', async () => {
    const context = await newContext(browser, base);
    const page = await context.newPage();
    const seen = await watchPage(page);
    await page.goto(inviteLink);
    await page
      .getByText('You were invited to an organization. Sign in with GitHub to accept the invitation.')
      .waitFor();
    // The token left the address bar (kept in this tab for the sign-in round trip).
    expect(page.url()).not.toContain('invite=');
    await signInThroughPage(page, 'grace');
    await page.getByRole('heading', { name: 'Invitation' }).waitFor();
    await screenshots(page, 'invite-accept');
    await page.getByRole('button', { name: 'Accept the invitation' }).click();
    await page.getByRole('heading', { name: 'Members of Acme Translations' }).waitFor();
    await page.getByRole('row', { name: /grace@example\.com/ }).waitFor();
    // A member sees the list but no control the role table keeps from them.
    expect(await page.getByRole('combobox', { name: /^Role of/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Leave' }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Create invitation' }).count()).toBe(0);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByText(/Your role \(member\) cannot create keys/).waitFor();
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
    await context.close();
  });

  it('the owner changes the new member’s role, then removes them after a confirmation', async () => {
    const { page } = ada;
    await page.reload();
    await page.getByRole('combobox', { name: 'Role of grace@example.com' }).waitFor();
    // The last owner's own row offers neither a role change nor leaving.
    expect(await page.getByRole('combobox', { name: 'Role of ada@example.com' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Leave' }).count()).toBe(0);
    await page.getByRole('combobox', { name: 'Role of grace@example.com' }).selectOption('admin');
    await page.getByText('grace@example.com is now admin.').waitFor();
    await page.getByRole('button', { name: 'Remove grace@example.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove grace@example.com?' });
    await dialog.waitFor();
    await screenshots(page, 'members-remove-confirm');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('grace@example.com is no longer a member.').waitFor();
    expect(await page.getByRole('row', { name: /grace@example\.com/ }).count()).toBe(0);
  });

  it('creates a key: the secret shown once with a copy button, then listed by prefix', async () => {
    const { page } = ada;
    await nav(page, 'API keys');
    await page.getByLabel('Name (optional)').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Copy your new key now: you will not see this again.').waitFor();
    apiKey = (await page.locator('code.secret').textContent())!;
    expect(apiKey).toMatch(/^sk_live_/);
    await page.getByRole('button', { name: 'Copy the key' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await clipboardText(page)).toBe(apiKey);
    const row = page.getByRole('row', { name: /ci/ });
    const prefix = (await row.locator('code').textContent())!.replace('…', '');
    expect(apiKey.startsWith(prefix)).toBe(true);
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('never');
    await screenshots(page, 'keys-created');
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.locator('code.secret').count()).toBe(0);
    expect(await page.content()).not.toContain(apiKey);
  });

  it('translates through the try-out form with the copied key: tokens and the validators’ verdict', async () => {
    const { page } = ada;
    await nav(page, 'Try it');
    await page.getByLabel('API key').fill(await clipboardText(page));
    await page
      .getByLabel('Strings to translate (one per line)')
      .fill('Hello {name}\nYou have {count, plural, one {# file} other {# files}}');
    await page.getByLabel('The strings are ICU messages').check();
    await page.getByRole('button', { name: 'Translate' }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    expect(await page.getByText(/^Model model-cheap: \d+ tokens in, \d+ tokens out\.$/).count()).toBe(1);
    await page.getByText('Validators: every translation passed (ICU, placeholders and tags, glossary).').waitFor();
    expect(await page.locator('.translations li').count()).toBe(2);
    expect(await page.locator('.translations mark.icu-argument').first().textContent()).toBe('{name}');
    await screenshots(page, 'try-out');
  });

  it('shows the usage against the plan’s limits, per day and model', async () => {
    const { page } = ada;
    await nav(page, 'Overview');
    await page.getByRole('heading', { name: 'Acme Translations: usage' }).waitFor();
    const tokens = page.getByText(/^Tokens this period: [1-9][\d,]* of [\d,]+ \((< 1|\d+) %\)/);
    await tokens.waitFor();
    expect(await page.locator('figure.chart').count()).toBe(2);
    expect(await page.locator('figure.chart').first().locator('rect[fill="#0b57d0"]').count()).toBeGreaterThan(0);
    expect(await page.getByText(/^Plan quota: /).count()).toBe(1);
    expect(await page.getByText(/^Daily budget cap: /).count()).toBe(1);
    await screenshots(page, 'usage');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await overflowsHorizontally(page)).toBe(false);
    await page.setViewportSize(VIEWPORTS.laptop);
  });

  it('turns the translation memory on, shows its count, and turns it off after a confirmation that deletes it', async () => {
    const { page } = ada;
    await nav(page, 'Organizations');
    await page.getByRole('heading', { name: 'Translation memory of Acme Translations' }).waitFor();
    await page.getByText('Off · 0 entries').waitFor();
    const toggle = page.getByRole('switch', { name: 'Keep a translation memory' });
    await toggle.click();
    await page.getByText('The translation memory is on.').waitFor();
    await page.getByText('On · 0 entries').waitFor();
    expect(await toggle.isChecked()).toBe(true);
    const items = [
      { id: 'a', text: 'Save your changes' },
      { id: 'b', text: 'Discard the draft' },
    ];
    const translate = () =>
      fetch(`${base}/api/v1/translate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sourceLocale: 'en', targetLocale: 'de', tier: 'cheap', items, style: {}, glossary: [] }),
      }).then((r) => r.json() as Promise<{ tokensIn: number; translations: { fromMemory?: boolean }[] }>);
    expect((await translate()).tokensIn).toBeGreaterThan(0);
    const again = await translate();
    expect(again.tokensIn).toBe(0);
    expect(again.translations.every((t) => t.fromMemory === true)).toBe(true);
    await nav(page, 'Overview');
    await nav(page, 'Organizations');
    await page.getByText('On · 2 entries').waitFor();
    await screenshots(page, 'organizations-memory');
    await page.setViewportSize(VIEWPORTS.phone);
    expect(await overflowsHorizontally(page)).toBe(false);
    await page.setViewportSize(VIEWPORTS.laptop);
    await page.getByRole('switch', { name: 'Keep a translation memory' }).click();
    const dialog = page.getByRole('dialog', { name: 'Turn the translation memory off?' });
    await dialog.getByText('Its 2 entries are deleted at once').waitFor();
    await dialog.getByRole('button', { name: 'Turn off and delete' }).click();
    await page.getByText('The translation memory is off and its entries are deleted.').waitFor();
    await page.getByText('Off · 0 entries').waitFor();
    const [row] = await h.database.query<{ n: number }>('SELECT count(*)::int AS n FROM translation_memory');
    expect(row!.n).toBe(0);
  });

  it('revokes the key after a confirmation; the next call with it gets 401', async () => {
    const { page } = ada;
    await nav(page, 'API keys');
    // The try-out's call shows as the key's last use.
    const row = page.getByRole('row', { name: /ci/ });
    expect(await row.getByRole('cell').nth(2).textContent()).not.toBe('never');
    await page.getByRole('button', { name: /^Revoke sk_live_/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Every request with this key is refused (401) from now on.').waitFor();
    await screenshots(page, 'keys-revoke-confirm');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(/is revoked: requests with it are refused from now on\.$/).waitFor();
    await page.getByText('No active key.').waitFor();
    const direct = await fetch(`${base}/api/v1/translate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        sourceLocale: 'en',
        targetLocale: 'de',
        tier: 'cheap',
        items: [{ id: 'a', text: 'Hi' }],
        style: {},
        glossary: [],
      }),
    });
    expect(direct.status).toBe(401);
    await nav(page, 'Try it');
    await page.getByLabel('API key').fill(apiKey);
    await page.getByLabel('Strings to translate (one per line)').fill('Hello');
    await page.getByRole('button', { name: 'Translate' }).click();
    await page.getByRole('alert').getByText('The API key was refused: it is wrong or has been revoked.').waitFor();
  });

  it('works by keyboard: the navigation and a form without the mouse', async () => {
    const { page } = ada;
    await page.goto('about:blank');
    await page.goto('/');
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
    const organizations = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organizations' });
    await organizations.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Organizations' }).waitFor();
    // Focus moved to the new screen's main region, as a page load would.
    expect(await page.evaluate('document.activeElement.id')).toBe('main');
  });

  it('signs out back to the landing page; the session no longer works', async () => {
    const { page, seen } = ada;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in with GitHub' }).waitFor();
    await page.getByText('You are signed out.').waitFor();
    const me = (await page.evaluate(`fetch('/api/v1/me').then((r) => r.status)`)) as number;
    expect(me).toBe(401);
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
  });
});
