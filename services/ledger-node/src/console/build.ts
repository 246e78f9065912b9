// Builds the browser console (console/src) into console/dist with @scriptorium/web-build: `make web`, the image
// build, the browser tests and the console benchmark run it. Prints each file and the gzip size of what /ui loads.
import { buildWebApp, type WebApp } from '@scriptorium/web-build/build';
import { CONSOLE_ASSETS_PATH, CONSOLE_DIST, CONSOLE_ENTRY_POINTS, CONSOLE_TSCONFIG } from './paths.ts';

const CONSOLE_APP: WebApp = {
  name: 'ledger console',
  entryPoints: CONSOLE_ENTRY_POINTS,
  outdir: CONSOLE_DIST,
  jsxImportSource: 'preact',
  tsconfig: CONSOLE_TSCONFIG,
  publicPath: CONSOLE_ASSETS_PATH,
};

/** Builds the console into `outdir` (default console/dist). */
export const buildConsole = (outdir?: string) => buildWebApp(CONSOLE_APP, { outdir });

if (import.meta.main) await buildWebApp(CONSOLE_APP, { outdir: process.argv[2], report: console.log });
