// `make crds`: writes crds/*.yaml and charts/scriptorium-operator/crds/*.yaml from the operator's zod schemas.
// `--check` exits 1 when a committed file differs from what the generator produces.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { renderCrdFiles } from './render.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const targets = [join(root, 'crds'), join(root, 'charts', 'scriptorium-operator', 'crds')];
const check = process.argv.includes('--check');
let stale = 0;
for (const [file, text] of Object.entries(renderCrdFiles())) {
  for (const dir of targets) {
    const path = join(dir, file);
    if (check) {
      let current = '';
      try {
        current = readFileSync(path, 'utf8');
      } catch {}
      if (current !== text) {
        console.error(`stale: ${relative(root, path)} (run make crds)`);
        stale++;
      }
    } else {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path, text);
      console.log(`wrote ${relative(root, path)}`);
    }
  }
}
process.exit(stale ? 1 : 0);
