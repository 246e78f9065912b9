import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const main = join(import.meta.dirname, '..', 'src', 'main.ts');

describe('operator process', () => {
  it('exits 2 with one line naming a bad variable', () => {
    const run = spawnSync(process.execPath, [main], {
      env: { PATH: process.env.PATH, HTTP__PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^invalid configuration: HTTP__PORT: /);
  });

  it('exits 2 naming KUBECONFIG when the file is missing', () => {
    const run = spawnSync(process.execPath, [main], {
      env: { PATH: process.env.PATH, KUBECONFIG: '/nonexistent/kubeconfig' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^invalid configuration: KUBECONFIG: /);
  });
});
