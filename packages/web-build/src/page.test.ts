import { describe, expect, it } from 'vitest';
import type { AssetStore } from './assets.ts';
import { appPage, contentSecurityPolicy, newNonce, type PageOptions, pageHeaders } from './page.ts';

const page: PageOptions = {
  title: 'An <app> & "more"',
  entry: 'app',
  policy: { scripts: "'strict-dynamic'", styles: "'nonce'" },
  head: '<meta name="color-scheme" content="light">',
  mount: '<p class="boot">Loading…</p>',
  after: '<noscript><p>Needs JavaScript.</p></noscript>',
  notBuilt: { status: 503, message: 'Not built: run <code>make web</code>.' },
};

/** A build whose entry `app` is one module script. */
const store = {
  tags: (entry: string, nonce: string) =>
    `<script type="module" src="/assets/${entry}-X.js" integrity="sha384-x" nonce="${nonce}"></script>`,
} as AssetStore;

const nonceOf = (headers: Record<string, string>) => /'nonce-([^']+)'/.exec(headers['content-security-policy']!)![1];

describe('the page', () => {
  it('a fresh 128-bit nonce each time', () => {
    const a = newNonce();
    expect(Buffer.from(a, 'base64')).toHaveLength(16);
    expect(newNonce()).not.toBe(a);
  });

  it("a policy with this origin's scripts and stylesheets, fetching from other origins too", () => {
    const csp = contentSecurityPolicy('abc', {
      scripts: "'self'",
      styles: "'self'",
      connect: ['http://10.0.0.2:8000'],
    });
    expect(csp).toBe(
      "default-src 'none'; script-src 'nonce-abc' 'self'; style-src 'self'; connect-src 'self' http://10.0.0.2:8000; " +
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'",
    );
  });

  it('a policy with script and style only through the nonce: nothing inline, no other origin', () => {
    const csp = contentSecurityPolicy('abc', { scripts: "'strict-dynamic'", styles: "'nonce'" });
    expect(csp).toContain("script-src 'nonce-abc' 'strict-dynamic'; style-src 'nonce-abc'; connect-src 'self';");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it('headers: the policy, never cached, no sniffing, no referrer, its own browsing context group', () => {
    expect(pageHeaders('abc', page.policy)).toEqual({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy('abc', page.policy),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    });
  });

  it("with a build: the entry's tags with the response's nonce, the mount element, nothing inline", () => {
    const a = appPage(store, page);
    const b = appPage(store, page);
    expect(a.status).toBe(200);
    expect(nonceOf(b.headers)).not.toBe(nonceOf(a.headers));
    expect(a.body).toBe(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>An &lt;app&gt; &amp; &quot;more&quot;</title>
<script type="module" src="/assets/app-X.js" integrity="sha384-x" nonce="${nonceOf(a.headers)}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading…</p></div>
<noscript><p>Needs JavaScript.</p></noscript>
</body>
</html>
`);
  });

  it('without a build: the given status and a page that says so, with no script or style at all', () => {
    const a = appPage(undefined, page);
    expect(a.status).toBe(503);
    expect(a.headers['content-security-policy']).toContain("default-src 'none'");
    expect(a.body).toContain(
      '<h1>An &lt;app&gt; &amp; &quot;more&quot;</h1>\n<p>Not built: run <code>make web</code>.</p>',
    );
    expect(a.body).not.toMatch(/<script|<style|\sstyle=/);
  });
});
