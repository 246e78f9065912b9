// The app page served at GET /: the shell of @scriptorium/web-build, whose only script and stylesheet are the built,
// content-hashed files under /assets/. Its policy: script and style only through the response's nonce ('strict-dynamic'
// lets the app's module load its own chunks), fetch only to this origin.
import type { PageOptions } from '@scriptorium/web-build';

const API_DOCUMENT = '<a href="/api/v1/openapi.json">OpenAPI document</a>';

/** The page's title, policy and the markup the app replaces; without a build, a page that points to the API. */
export const APP_PAGE: PageOptions = {
  title: 'Scriptorium translation service',
  entry: 'app',
  policy: { scripts: "'strict-dynamic'", styles: "'nonce'" },
  head: '<meta name="color-scheme" content="light">',
  mount: '<p class="boot">Loading…</p>',
  after: `<noscript><p>This app needs JavaScript. The API itself is described in the\n${API_DOCUMENT}.</p></noscript>`,
  notBuilt: {
    status: 200,
    message: `The web app is not built in this installation (run <code>make web</code>). The API works: it is described in the\n${API_DOCUMENT}.`,
  },
};
