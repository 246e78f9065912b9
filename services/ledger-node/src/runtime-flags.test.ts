// The image starts the node with the same V8 flags and allocator settings as LocalCluster does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NODE_RUNTIME_ENV, NODE_RUNTIME_FLAGS } from './runtime-flags.ts';

describe('runtime flags', () => {
  it("the Dockerfile's ENTRYPOINT runs node with NODE_RUNTIME_FLAGS", () => {
    const dockerfile = readFileSync(join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
    const line = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(line).toBeDefined();
    expect(JSON.parse(line as string)).toEqual(['node', ...NODE_RUNTIME_FLAGS, 'services/ledger-node/src/main.ts']);
  });

  it("the image's ENV carries NODE_RUNTIME_ENV", () => {
    const dockerfile = readFileSync(join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
    for (const [name, value] of Object.entries(NODE_RUNTIME_ENV))
      expect(dockerfile).toMatch(new RegExp(`^\\s+${name}=${value.replaceAll('.', '\\.')} \\\\$`, 'm'));
  });
});
