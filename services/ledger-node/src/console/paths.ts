// Where the browser console's sources and built files live (services/ledger-node/console/).
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', 'console');

/** The built console: manifest.json and assets/ (git-ignored; `make web` and the image build write it). */
export const CONSOLE_DIST = process.env.LEDGER_CONSOLE_DIST ?? join(root, 'dist');
export const CONSOLE_ENTRY_POINTS = { console: join(root, 'src', 'main.tsx') };
export const CONSOLE_TSCONFIG = join(root, 'tsconfig.json');
/** The URL path the console's files are served under. */
export const CONSOLE_ASSETS_PATH = '/ui/assets/';
