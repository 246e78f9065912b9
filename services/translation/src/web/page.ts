// The app page served at GET /: a small HTML shell whose only script and stylesheet are the built, content-hashed
// files under /assets/, each carrying the response's fresh nonce and its integrity value. Nothing inline.
import { randomBytes } from 'node:crypto';

/** A fresh nonce (128 bits, base64). */
export const newNonce = (): string => randomBytes(16).toString('base64');

/**
 * The strict, nonce-based Content-Security-Policy of the page: only the nonce-bearing tags load script and style
 * ('strict-dynamic' lets the app's module load its own chunks), no inline script, handler or style attribute, no
 * other origin for anything, no forms posted anywhere, no framing.
 */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/** The headers of the page (and of every HTML answer of the app). */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': contentSecurityPolicy(nonce),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
}

const TITLE = 'Scriptorium translation service';

/** The page with the built app: `tags` are the entry's `<link>` and `<script>` tags (from the asset store). */
export function renderAppPage(tags: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${TITLE}</title>
${tags}
</head>
<body>
<div id="app"><p class="boot">Loading…</p></div>
<noscript><p>This app needs JavaScript. The API itself is described in the
<a href="/api/v1/openapi.json">OpenAPI document</a>.</p></noscript>
</body>
</html>
`;
}

/** The page of an installation whose browser app was not built: says so, and points to the API. No script. */
export function renderNotBuiltPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TITLE}</title>
</head>
<body>
<main>
<h1>${TITLE}</h1>
<p>The web app is not built in this installation (run <code>make web</code>). The API works: it is described in the
<a href="/api/v1/openapi.json">OpenAPI document</a>.</p>
</main>
</body>
</html>
`;
}
