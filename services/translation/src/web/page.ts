// The app page served at GET /: static HTML whose only script and style carry a fresh per-response nonce.
import { randomBytes } from 'node:crypto';

/** A fresh nonce (128 bits, base64). */
export const newNonce = (): string => randomBytes(16).toString('base64');

/** The strict, nonce-based Content-Security-Policy of the page. */
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

export function renderPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Scriptorium translation service</title>
<style nonce="${nonce}">
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
  code { background: #f2f2f2; padding: 0 .25rem; border-radius: 3px; }
  li { margin: .25rem 0; }
</style>
</head>
<body>
<main>
<h1>Scriptorium translation service</h1>
<p>A metered translation API. Send a batch of strings with source and target locales, a quality tier
(<code>cheap</code> or <code>top</code>), a style and a glossary; get translations and the token counts used.
Usage counts against your plan's token quota and daily budget cap. A quality judge scores translations from 0 to 5
per dimension.</p>
<p>Authenticate with <code>Authorization: Bearer &lt;API_KEY&gt;</code>. The full interface is in the
<a href="/api/v1/openapi.json">OpenAPI document</a>.</p>
<h2>Endpoints</h2>
<ul id="endpoints"><li>Loading the list from the OpenAPI document…</li></ul>
</main>
<script nonce="${nonce}">
  fetch('/api/v1/openapi.json').then((r) => r.json()).then((doc) => {
    const list = document.getElementById('endpoints');
    list.textContent = '';
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const li = document.createElement('li');
        const code = document.createElement('code');
        code.textContent = method.toUpperCase() + ' ' + path;
        li.append(code, ' ' + (op.summary || ''));
        list.append(li);
      }
    }
  }).catch(() => {});
</script>
</body>
</html>
`;
}
