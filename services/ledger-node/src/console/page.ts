// The console's page at GET /ui: the shell of @scriptorium/web-build, everything from the built files under
// /ui/assets/. Its policy: script from the nonce-bearing tags and this origin's files (the module's own chunks), style
// only from this origin's stylesheets, and fetch to exactly the origins the cluster board reads: this node and the
// peers of its registry.
import type { PageOptions } from '@scriptorium/web-build';

/** The page of the node `nodeId`, whose board reads `peerOrigins`; without a build, a 503 that says so. */
export const consolePage = (nodeId: string, peerOrigins: readonly string[]): PageOptions => ({
  title: `Ledger console · ${nodeId}`,
  entry: 'console',
  policy: { scripts: "'self'", styles: "'self'", connect: peerOrigins },
  head: '<meta name="referrer" content="no-referrer">',
  mount: '<p>The ledger console needs JavaScript: it verifies proofs and finality certificates in this browser.</p>',
  notBuilt: { status: 503, message: 'The ledger console is not built in this installation (make web builds it).' },
});
