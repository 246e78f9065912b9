// The review queue and the security screen in headless Chromium against the real service on real PostgreSQL, signed in
// through the local GitHub-compatible OAuth server: the queue shows each item's validator issues (one item flagged
// through the whole path: a translation the fake upstream got wrong, sampled and judged by the worker); one item
// approved, one edited with an invalid ICU text (the 422's issues shown next to it) then fixed, one rejected with a
// reason; MFA enrolled by reading the secret from the page and computing the code (otplib); the privacy export
// downloaded and the account deleted after the typed confirmation, checked in the database. Screenshots of each screen
// at laptop and phone widths.
import { readFile } from 'node:fs/promises';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewItems } from '../src/db/schema.ts';
import { issueApiKey } from '../src/domain/accounts.ts';
import {
  addGitHubUser,
  hasChromium,
  launchBrowser,
  newContext,
  screenshots,
  signInThroughPage,
  startWebHarness,
  watchPage,
} from './browser.ts';
import { batch, bearer, type Harness, WORKER_SECRET } from './harness.ts';

let h: Harness;
let base: string;
let browser: Browser;
let page: Page;
let seen: Awaited<ReturnType<typeof watchPage>>;
let orgId: string;
let mfaSecret: string;

const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
const card = (itemId: string) => page.getByRole('article', { name: new RegExp(`^${itemId} `) });

/** Review items as the background judge writes them (heuristic scores, the judge named). */
async function flag(itemId: string, sourceText: string, targetText: string, isIcu: boolean, overall: number) {
  await h.database.db.insert(reviewItems).values({
    orgId,
    sourceLocale: 'en',
    targetLocale: 'de',
    itemId,
    sourceText,
    targetText,
    isIcu,
    model: 'model-cheap',
    scores: { accuracy: overall, fluency: 4.5, terminology: 5, style: 4, localeConventions: 5, judge: 'heuristic' },
    overall,
  });
}

/**
 * The whole path of a flagged item: a key of the organization translates a batch the fake upstream gets wrong twice
 * (the answer and the retry), the organization samples every batch and flags every score, and the worker's judge
 * opens the review item with the validators' issues.
 */
async function flagThroughTheJudge() {
  await h.database.query('UPDATE organizations SET judge_sample_rate = 1, review_threshold = 5.1 WHERE id = $1', [
    orgId,
  ]);
  const [user] = await h.database.query<{ id: string }>(`SELECT id FROM users WHERE email = 'lin@example.com'`);
  const { apiKey } = await issueApiKey(h.database, { userId: user!.id, orgId, defaultPlan: 'free', actor: 'operator' });
  h.fake!.set({ invalidReplies: 2 });
  const translated = await h.app.inject({
    method: 'POST',
    url: '/api/v1/translate',
    headers: bearer(apiKey),
    payload: batch(1, { items: [{ id: 'greeting', text: 'Hello {name}!' }] }),
  });
  h.fake!.set({ invalidReplies: 0 });
  expect(translated.statusCode).toBe(200);
  const worker = await h.app.inject({ method: 'POST', url: '/api/worker', headers: bearer(WORKER_SECRET) });
  expect(worker.json()).toMatchObject({ failed: 0 });
  // Later batches of the test are not sampled.
  await h.database.query('UPDATE organizations SET judge_sample_rate = 0 WHERE id = $1', [orgId]);
}

describe.skipIf(!hasChromium)('signed-in web app: review queue, MFA, privacy', () => {
  beforeAll(async () => {
    // The OpenAI-compatible fake upstream: its translations can be made wrong on purpose (see flagThroughTheJudge).
    ({ h, base } = await startWebHarness({ provider: 'openai' }));
    addGitHubUser(h, 'lin', 'Lin Reviewer');
    browser = await launchBrowser();
    const context = await newContext(browser, base);
    page = await context.newPage();
    seen = await watchPage(page);
    await page.goto('/');
    await signInThroughPage(page, 'lin');
    await nav('Organizations');
    await page.getByLabel('Name').fill('Docs Team');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByText('Created Docs Team; it is now the selected organization.').waitFor();
    const [org] = await h.database.query<{ id: string }>(`SELECT id FROM organizations WHERE name = 'Docs Team'`);
    orgId = org!.id;
    await flagThroughTheJudge();
    await flag(
      'files',
      'You have {count, plural, one {# file} other {# files}}',
      'Sie haben {count, plural, one {# Datei} other {# Dateien}}',
      true,
      2.8,
    );
    await flag('farewell', 'Goodbye', 'Tschüss', false, 2.1);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('lists the flagged items with source, target, ICU arguments marked, scores per dimension and validator issues', async () => {
    await nav('Reviews');
    await page.getByRole('heading', { name: 'Review queue of Docs Team' }).waitFor();
    await card('files').waitFor();
    expect(await page.getByRole('article').count()).toBe(3);
    const files = card('files');
    expect(await files.locator('mark.icu-argument').allTextContents()).toEqual(
      expect.arrayContaining(['{count, plural,', '#']),
    );
    expect(await files.getByRole('meter', { name: 'Accuracy score' }).getAttribute('value')).toBe('2.8');
    // The item the judge flagged through the whole path shows what the validators found in its target.
    const greeting = card('greeting');
    await greeting.getByRole('heading', { name: 'Validator issues' }).waitFor();
    expect(await greeting.locator('ul.issues li').allTextContents()).toEqual([
      'placeholder {name} missing placeholder_missing',
    ]);
    expect(await greeting.getByRole('meter', { name: 'Accuracy score' }).count()).toBe(1);
    // An item whose target passed the validators (flagged on its score alone) lists none.
    expect(await files.getByRole('heading', { name: 'Validator issues' }).count()).toBe(0);
    await screenshots(page, 'reviews');
  });

  it('approves one item', async () => {
    await card('greeting').getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved greeting: the translation stands.').waitFor();
    expect(await card('greeting').count()).toBe(0);
  });

  it('edits another with invalid ICU (the 422 issues shown next to the text), then fixes it', async () => {
    const files = card('files');
    await files.getByRole('button', { name: 'Edit' }).click();
    const editor = files.getByLabel('Corrected translation');
    await editor.fill('Sie haben {anzahl, plural, one {# Datei} other {# Dateien}}');
    await files.getByRole('button', { name: 'Save the edit' }).click();
    await files
      .getByText('The edited text fails the validators: fix the issues listed under it and save again.')
      .waitFor();
    const issues = files.locator('ul.issues li');
    expect(await issues.count()).toBeGreaterThan(0);
    expect((await issues.allTextContents()).join(' ')).toMatch(/icu_argument_(missing|extra)/);
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    // The editor names the issue list as its description, for screen readers.
    expect(await editor.getAttribute('aria-describedby')).toContain(
      (await files.locator('ul.issues').getAttribute('id'))!,
    );
    expect(await files.locator('.hint mark.icu-argument').first().textContent()).toBe('{anzahl, plural,');
    await screenshots(page, 'reviews-edit-422');
    await editor.fill('Sie haben {count, plural, one {# Datei} other {# Dateien}} im Ordner');
    await files.getByRole('button', { name: 'Save the edit' }).click();
    await page
      .getByText('Saved files: “Sie haben {count, plural, one {# Datei} other {# Dateien}} im Ordner”.')
      .waitFor();
    const [row] = await h.database.query<{ status: string; final_target: string }>(
      `SELECT status, final_target FROM review_items WHERE item_id = 'files'`,
    );
    expect(row).toEqual({
      status: 'edited',
      final_target: 'Sie haben {count, plural, one {# Datei} other {# Dateien}} im Ordner',
    });
  });

  it('rejects a third with a reason; decided items are listed under their status', async () => {
    const farewell = card('farewell');
    await farewell.getByRole('button', { name: 'Reject' }).click();
    const reject = farewell.getByRole('button', { name: 'Reject' });
    expect(await reject.isDisabled()).toBe(true);
    await farewell.getByLabel('Reason for rejecting').fill('Too informal for our product');
    await reject.click();
    await page.getByText('Rejected farewell.').waitFor();
    await page.getByText('Nothing to review: the judge flagged no translation.').waitFor();
    await page.getByRole('button', { name: 'Rejected' }).click();
    await card('farewell').getByText('Rejected: Too informal for our product').waitFor();
    await page.getByRole('button', { name: 'Edited' }).click();
    await card('files').waitFor();
    await screenshots(page, 'reviews-edited');
  });

  it('enrolls MFA: the QR code drawn locally, the secret read from the page, a computed code verified', async () => {
    await nav('Security');
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const qr = page.getByRole('img', { name: 'QR code of the authenticator secret' });
    await qr.waitFor();
    expect(await qr.locator('path').getAttribute('d')).toMatch(/^M\d+ \d+h1v1h-1z/);
    const secret = (await page.locator('code.secret').textContent())!;
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    mfaSecret = secret;
    await screenshots(page, 'security-mfa-enroll');
    await page.getByLabel('The 6-digit code the app shows').fill('000000');
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await page
      .getByRole('alert')
      .getByText(/That code is not valid/)
      .waitFor();
    await page.getByLabel('The 6-digit code the app shows').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Verify and turn on' }).click();
    await page.getByText('Two-factor authentication is on.').waitFor();
    const [user] = await h.database.query<{ mfa_enabled: boolean }>(
      `SELECT mfa_enabled FROM users WHERE email = 'lin@example.com'`,
    );
    expect(user?.mfa_enabled).toBe(true);
    await screenshots(page, 'security');
  });

  it('asks a session that has not passed a code for one before issuing a key (step-up), then issues it', async () => {
    const context = await newContext(browser, base);
    const other = await context.newPage();
    await other.goto('/');
    await signInThroughPage(other, 'lin');
    await other.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await other.getByRole('button', { name: 'Create key' }).click();
    const dialog = other.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.waitFor();
    await screenshots(other, 'step-up');
    // The enrolment used this time step's code, and a code counts once: the next step's code (within the drift).
    await dialog
      .getByLabel('Authentication code')
      .fill(await generate({ secret: mfaSecret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await dialog.getByRole('button', { name: 'Verify' }).click();
    await other.getByText('Copy your new key now: you will not see this again.').waitFor();
    expect(await other.locator('code.secret').textContent()).toMatch(/^sk_live_/);
    await context.close();
  });

  it('downloads the privacy export', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download my data' }).click();
    const file = await download;
    const path = await file.path();
    const bundle = JSON.parse(await readFile(path, 'utf8'));
    const text = JSON.stringify(bundle);
    expect(text).toContain('lin@example.com');
    expect(text).toContain('Docs Team');
    expect(text).not.toMatch(/key_?hash|token_?hash|mfa_?secret/i);
    await page.getByText(/^Your data is downloaded as /).waitFor();
  });

  it('deletes the account after the typed confirmation; the database keeps nothing to sign in with', async () => {
    await page.getByRole('button', { name: 'Delete my account' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your account?' });
    await dialog.waitFor();
    const confirm = dialog.getByRole('button', { name: 'Delete my account' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type delete my account to confirm').fill('delete my acount');
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel('Type delete my account to confirm').fill('delete my account');
    await screenshots(page, 'security-delete-confirm');
    await confirm.click();
    await page.getByRole('heading', { name: 'Your account is deleted' }).waitFor();
    await page.getByText('Organizations deleted: 1').waitFor();
    await screenshots(page, 'security-deleted');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('link', { name: 'Sign in with GitHub' }).waitFor();
    expect(await h.database.query(`SELECT 1 FROM users WHERE email = 'lin@example.com'`)).toEqual([]);
    expect(await h.database.query(`SELECT 1 FROM organizations WHERE id = $1`, [orgId])).toEqual([]);
    expect((await page.evaluate(`fetch('/api/v1/me').then((r) => r.status)`)) as number).toBe(401);
    expect(seen.violations).toEqual([]);
    expect(seen.errors).toEqual([]);
  });
});
