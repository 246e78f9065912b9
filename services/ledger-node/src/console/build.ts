// Builds the browser console (console/src) into console/dist with @scriptorium/web-build: `make web`, the image
// build, the browser tests and the console benchmark run it. Prints each file and the gzip size of what /ui loads.
import { buildBundle, entryGzipBytes } from '@scriptorium/web-build/build';
import { CONSOLE_ASSETS_PATH, CONSOLE_DIST, CONSOLE_ENTRY_POINTS, CONSOLE_TSCONFIG } from './paths.ts';

/** Builds the console into `outdir` (default console/dist). */
export const buildConsole = (outdir: string = CONSOLE_DIST) =>
  buildBundle({
    entryPoints: CONSOLE_ENTRY_POINTS,
    outdir,
    jsxImportSource: 'preact',
    tsconfig: CONSOLE_TSCONFIG,
    publicPath: CONSOLE_ASSETS_PATH,
  });

if (import.meta.main) {
  const started = performance.now();
  const { manifest, manifestPath } = await buildConsole(process.argv[2]);
  for (const [name, f] of Object.entries(manifest.files)) {
    console.log(`  ${name.padEnd(28)} ${String(f.bytes).padStart(8)} B  ${String(f.gzipBytes).padStart(7)} B gzip`);
  }
  const kb = (entryGzipBytes(manifest, 'console') / 1024).toFixed(1);
  console.log(
    `ledger console built in ${Math.round(performance.now() - started)} ms: ${manifestPath} (${kb} KiB gzip at start)`,
  );
}
