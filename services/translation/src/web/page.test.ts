import { appPage } from '@scriptorium/web-build';
import { describe, expect, it } from 'vitest';
import { APP_PAGE } from './page.ts';

describe('the app page', () => {
  it('script and style only through the nonce', () => {
    const { headers } = appPage(undefined, APP_PAGE);
    expect(headers['content-security-policy']).toMatch(/script-src 'nonce-[^']+' 'strict-dynamic'; style-src 'nonce-/);
  });

  it('without a build, a page (200) that says so and points to the API, with no script at all', () => {
    const { status, body } = appPage(undefined, APP_PAGE);
    expect(status).toBe(200);
    expect(body).toContain('make web');
    expect(body).toContain('/api/v1/openapi.json');
    expect(body).not.toMatch(/<script|<style/);
  });
});
