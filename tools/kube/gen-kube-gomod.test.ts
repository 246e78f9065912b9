import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, 'gen-kube-gomod.sh');
const dir = mkdtempSync(join(tmpdir(), 'gen-kube-gomod-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Shaped like k8s.io/kubernetes' own go.mod: staging modules at v0.0.0, replaced by ./staging paths. */
const upstream = `module k8s.io/kubernetes

go 1.24.0

godebug default=go1.24

require (
	github.com/blang/semver/v4 v4.0.0
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go => ./staging/src/k8s.io/client-go
)
`;

function generate(version: string, gomod: string) {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.mod`);
  writeFileSync(file, gomod);
  return spawnSync('bash', [script, version], { encoding: 'utf8', env: { ...process.env, KUBE_GOMOD_FILE: file } });
}

describe('gen-kube-gomod.sh', () => {
  it('replaces every staging module with its published v0.Y.Z and keeps godebug', () => {
    const run = generate('v1.34.4', upstream);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('require k8s.io/kubernetes v1.34.4');
    expect(run.stdout).toContain('\tk8s.io/api => k8s.io/api v0.34.4\n');
    expect(run.stdout).toContain('\tk8s.io/client-go => k8s.io/client-go v0.34.4\n');
    expect(run.stdout).toContain('godebug default=go1.24');
    expect(run.stdout).toContain('go 1.24.0');
    expect(run.stdout).not.toContain('./staging');
  });

  it('refuses a replace line it does not understand', () => {
    const run = generate(
      'v1.34.4',
      upstream.replace('replace (\n', 'replace (\n\tgithub.com/x/y => github.com/z/y v1.0.0\n'),
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/unexpected replace lines/);
  });

  it('refuses a version that is not a v1.Y.Z release', () => {
    const run = generate('v1.34.0-rc.1', upstream);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/not a v1\.Y\.Z release/);
  });
});
