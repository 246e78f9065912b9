// The console's HTML page and its headers: no inline script or style, everything from the built files, a strict
// nonce-based Content-Security-Policy (a fresh nonce per response) whose connect-src names exactly the origins the
// cluster board reads: this node and the peers of its registry.
import type { AssetStore } from '@scriptorium/web-build';

/** The entry point of the console build. */
export const CONSOLE_ENTRY = 'console';

/**
 * The page's Content-Security-Policy. Script: the nonce-bearing tags and this origin's files (the module's own
 * chunks), never an inline script, handler or `eval`; style: only stylesheets of this origin (no style attributes or
 * elements); fetch: this node and its peers.
 * @example contentSecurityPolicy('abc', ['http://10.0.0.2:8000'])
 */
export function contentSecurityPolicy(nonce: string, peerOrigins: readonly string[]): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}' 'self'`,
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self'${peerOrigins.map((o) => ` ${o}`).join('')}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The page: the console's tags (each with the nonce and its integrity value) and the element it mounts into. */
export function consolePage(assets: AssetStore, nonce: string, nodeId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Ledger console · ${escapeHtml(nodeId)}</title>
${assets.tags(CONSOLE_ENTRY, nonce)}
</head>
<body>
<div id="app"><p>The ledger console needs JavaScript: it verifies proofs and finality certificates in this browser.</p></div>
</body>
</html>
`;
}
