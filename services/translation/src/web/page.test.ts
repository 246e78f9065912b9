import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy, newNonce, pageHeaders, renderAppPage, renderNotBuiltPage } from './page.ts';

describe('the app page', () => {
  it('a fresh 128-bit nonce each time', () => {
    const a = newNonce();
    expect(Buffer.from(a, 'base64')).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
  });

  it('the policy allows script and style only through the nonce, nothing inline, no other origin', () => {
    const csp = contentSecurityPolicy('abc');
    expect(csp).toContain("script-src 'nonce-abc' 'strict-dynamic'");
    expect(csp).toContain("style-src 'nonce-abc'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(pageHeaders('abc')).toMatchObject({ 'content-security-policy': csp, 'cache-control': 'no-store' });
  });

  it('the page holds the given tags and no inline script or style', () => {
    const html = renderAppPage('<script type="module" src="/assets/app-X.js" nonce="n"></script>');
    expect(html).toContain('<script type="module" src="/assets/app-X.js" nonce="n"></script>');
    expect(html).not.toMatch(/<style|\sstyle=|<script>/);
  });

  it('without a build, a page that says so, with no script at all', () => {
    const html = renderNotBuiltPage();
    expect(html).toContain('make web');
    expect(html).toContain('/api/v1/openapi.json');
    expect(html).not.toMatch(/<script|<style/);
  });
});
