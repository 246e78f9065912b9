// Where the browser app's sources are and where its build goes (`make web`, the image build, the browser tests).
import { join } from 'node:path';

const webRoot = join(import.meta.dirname, '..', '..', 'web');

/** The app's entry points: entry name → source file. */
export const WEB_ENTRY_POINTS = { app: join(webRoot, 'src', 'main.tsx') };
/** The build's output folder (manifest.json and assets/); never committed. */
export const WEB_DIST = join(webRoot, 'dist');
/** The browser app's own tsconfig (DOM library, Preact's JSX). */
export const WEB_TSCONFIG = join(webRoot, 'tsconfig.json');
