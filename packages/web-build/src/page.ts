// The HTML page that loads a built app: a small shell whose only script and stylesheets are the built files, each
// tag carrying the response's fresh nonce and its integrity value, under a strict nonce-based Content-Security-Policy.
// Without a build, the same shell says so with no script at all. Framework-free: the caller's route sends the
// status, headers and body.
import { randomBytes } from 'node:crypto';
import type { AssetStore } from './assets.ts';

/** A fresh nonce (128 bits, base64). */
export const newNonce = (): string => randomBytes(16).toString('base64');

/** What a page's policy allows beyond what every page allows (see `contentSecurityPolicy`). */
export interface PagePolicy {
  /**
   * What may run script besides the nonce-bearing tags: `'strict-dynamic'` (whatever they load, so a module's own
   * chunks) or `'self'` (this origin's files).
   */
  scripts: "'strict-dynamic'" | "'self'";
  /** Stylesheets: `'nonce'` (only the nonce-bearing tags) or `'self'` (this origin's files). */
  styles: "'nonce'" | "'self'";
  /** Origins besides this one that the app fetches from. */
  connect?: readonly string[];
}

/**
 * The page's Content-Security-Policy: nothing from anywhere by default; script from the nonce-bearing tags (and what
 * `policy.scripts` adds), never inline or `eval`; style as `policy.styles` says, never an inline style; fetch to
 * this origin and `policy.connect`; images from this origin and data: URLs; no `<base>`, no form posted anywhere, no
 * framing, no plugins.
 * @example contentSecurityPolicy('abc', { scripts: "'self'", styles: "'self'", connect: ['http://10.0.0.2:8000'] })
 */
export function contentSecurityPolicy(nonce: string, policy: PagePolicy): string {
  const styleSource = policy.styles === "'nonce'" ? `'nonce-${nonce}'` : policy.styles;
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' ${policy.scripts}`,
    `style-src ${styleSource}`,
    ["connect-src 'self'", ...(policy.connect ?? [])].join(' '),
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The headers of a page (never cached: each response has its own nonce). */
export function pageHeaders(nonce: string, policy: PagePolicy): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': contentSecurityPolicy(nonce, policy),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
}

const escapeHtml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface PageOptions {
  /** The page's title (escaped here). */
  title: string;
  /** The build's entry the page loads. */
  entry: string;
  policy: PagePolicy;
  /** Markup added to `<head>` before the title, e.g. `<meta name="color-scheme" content="light">` (trusted). */
  head?: string;
  /** What the element the app mounts into (`#app`) shows until the app has started (trusted markup). */
  mount: string;
  /** Markup after `#app`, e.g. a `<noscript>` (trusted). */
  after?: string;
  /** Without a build: the answer's status and what the page says (trusted markup, under a heading of the title). */
  notBuilt: { status: number; message: string };
}

export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A whole HTML document, one element a line: `head` after the charset and viewport, then the title, then `tags`. */
function htmlDocument(title: string, head: readonly string[], tags: string, body: readonly string[]): string {
  const lines = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    ...head,
    `<title>${escapeHtml(title)}</title>`,
    ...(tags ? [tags] : []),
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * The answer to a request for the app's page: the page with the entry's tags (from `assets`, each with a fresh nonce)
 * under the page's policy, or, when `assets` is undefined (the app not built), a page with no script that says so.
 * @example
 * const page = appPage(loadAssets('web/dist'), { title: 'App', entry: 'app', policy, mount: 'Loading…', notBuilt });
 * reply.code(page.status).headers(page.headers).send(page.body);
 */
export function appPage(assets: AssetStore | undefined, opts: PageOptions): PageResponse {
  const nonce = newNonce();
  const headers = pageHeaders(nonce, opts.policy);
  if (!assets) {
    const { status, message } = opts.notBuilt;
    const body = ['<main>', `<h1>${escapeHtml(opts.title)}</h1>`, `<p>${message}</p>`, '</main>'];
    return { status, headers, body: htmlDocument(opts.title, [], '', body) };
  }
  const head = opts.head ? [opts.head] : [];
  const body = [`<div id="app">${opts.mount}</div>`, ...(opts.after ? [opts.after] : [])];
  return { status: 200, headers, body: htmlDocument(opts.title, head, assets.tags(opts.entry, nonce), body) };
}
