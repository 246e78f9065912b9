// Builds the browser app (web/src) into web/dist with @scriptorium/web-build: `make web`, `npm run build:web -w
// @scriptorium/translation`, the image build and the browser tests run it. Prints each file and the gzip size of
// what the page loads at start.
import { buildBundle, entryGzipBytes } from '@scriptorium/web-build/build';
import { WEB_DIST, WEB_ENTRY_POINTS, WEB_TSCONFIG } from './paths.ts';

/** Builds the app into `outdir` (default web/dist). */
export const buildWeb = (outdir: string = WEB_DIST) =>
  buildBundle({ entryPoints: WEB_ENTRY_POINTS, outdir, jsxImportSource: 'preact', tsconfig: WEB_TSCONFIG });

if (import.meta.main) {
  const started = performance.now();
  const { manifest, manifestPath } = await buildWeb(process.argv[2]);
  for (const [name, f] of Object.entries(manifest.files)) {
    console.log(`  ${name.padEnd(24)} ${String(f.bytes).padStart(8)} B  ${String(f.gzipBytes).padStart(7)} B gzip`);
  }
  const kb = (entryGzipBytes(manifest, 'app') / 1024).toFixed(1);
  console.log(
    `web app built in ${Math.round(performance.now() - started)} ms: ${manifestPath} (${kb} KiB gzip at start)`,
  );
}
