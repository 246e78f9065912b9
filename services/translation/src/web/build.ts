// Builds the browser app (web/src) into web/dist with @scriptorium/web-build: `make web`, `npm run build:web -w
// @scriptorium/translation`, the image build and the browser tests run it. Prints each file and the gzip size of
// what the page loads at start.
import { buildWebApp, type WebApp } from '@scriptorium/web-build/build';
import { WEB_DIST, WEB_ENTRY_POINTS, WEB_TSCONFIG } from './paths.ts';

const WEB_APP: WebApp = {
  name: 'web app',
  entryPoints: WEB_ENTRY_POINTS,
  outdir: WEB_DIST,
  jsxImportSource: 'preact',
  tsconfig: WEB_TSCONFIG,
};

/** Builds the app into `outdir` (default web/dist). */
export const buildWeb = (outdir?: string) => buildWebApp(WEB_APP, { outdir });

if (import.meta.main) await buildWebApp(WEB_APP, { outdir: process.argv[2], report: console.log });
