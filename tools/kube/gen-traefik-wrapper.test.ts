import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, 'gen-traefik-wrapper.sh');
const dir = mkdtempSync(join(tmpdir(), 'gen-traefik-wrapper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Shaped like Traefik v3.7's go.mod: a local replace of the extension module, forks, an exclude. */
const upstream = `module github.com/traefik/traefik/v3

go 1.26.0

require (
	github.com/abbot/go-http-auth v0.0.0-00010101000000-000000000000 // No tag on the repo.
	github.com/traefik/traefik/dynamic/ext v0.0.0-00010101000000-000000000000
)

// Dynamic config extension.
replace github.com/traefik/traefik/dynamic/ext => ./pkg/config/dynamic/ext

// Containous forks
replace (
	github.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20260804094822-b975dcaa8c48
	github.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59 // a fork
)

exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible
`;

/** The one file that uses the extension module, as in the release's source. */
const httpConfig = `package dynamic

import "github.com/traefik/traefik/dynamic/ext"

type HTTP struct {
	ext.HTTP \`yaml:",inline"\`
}

type Router struct {
	ext.Router \`yaml:",inline"\`
	ext.HTTP
}
`;

function generate(version: string, gomod: string, source: Record<string, string> = {}) {
  const run = join(dir, Math.random().toString(36).slice(2));
  const src = join(run, 'src');
  mkdirSync(src, { recursive: true });
  for (const [path, text] of Object.entries(source)) {
    mkdirSync(join(src, path, '..'), { recursive: true });
    writeFileSync(join(src, path), text);
  }
  writeFileSync(join(run, 'go.mod'), gomod);
  const out = join(run, 'out');
  const result = spawnSync('bash', [script, version, out], {
    encoding: 'utf8',
    env: { ...process.env, TRAEFIK_GOMOD_FILE: join(run, 'go.mod'), TRAEFIK_SRC_DIR: src },
  });
  const read = (file: string) => readFileSync(join(out, file), 'utf8');
  return { ...result, read };
}

describe('gen-traefik-wrapper.sh', () => {
  it('requires the release, repeats its forks, exclude and go line, and points the extension module to ./ext', () => {
    const run = generate('v3.7.13', upstream, { 'pkg/config/dynamic/http_config.go': httpConfig });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const gomod = run.read('go.mod');
    expect(gomod).toContain('module scriptorium.dev/traefik-wrapper\n');
    expect(gomod).toContain('\ngo 1.26.0\n');
    expect(gomod).toContain('require github.com/traefik/traefik/v3 v3.7.13\n');
    expect(gomod).toContain('\tgithub.com/traefik/traefik/dynamic/ext => ./ext\n');
    expect(gomod).toContain(
      '\tgithub.com/abbot/go-http-auth => github.com/containous/go-http-auth v0.4.1-0.20260804094822-b975dcaa8c48\n',
    );
    expect(gomod).toContain(
      '\tgithub.com/gorilla/mux => github.com/containous/mux v0.0.0-20250523120546-41b6ec3aed59\n',
    );
    expect(gomod).toContain('exclude github.com/tencentcloud/tencentcloud-sdk-go v3.0.83+incompatible');
    expect(gomod).not.toContain('./pkg/config');
    expect(gomod).not.toContain('a fork');
    expect(run.read('ext/go.mod')).toBe('module github.com/traefik/traefik/dynamic/ext\n\ngo 1.26.0\n');
    const ext = run.read('ext/ext.go');
    expect(ext).toContain('package ext\n');
    // Exactly the names the source uses, once each.
    expect(ext.match(/^type \w+ struct\{\}$/gm)).toEqual(['type HTTP struct{}', 'type Router struct{}']);
  });

  it('writes no extension module for a release without that replace (v3.6)', () => {
    const v36 = upstream
      .replace(/\/\/ Dynamic config extension\.\nreplace [^\n]+\n/, '')
      .replace(/\tgithub\.com\/traefik\/traefik\/dynamic\/ext [^\n]+\n/, '');
    const run = generate('v3.6.12', v36);
    expect(run.status).toBe(0);
    expect(run.read('go.mod')).not.toContain('dynamic/ext');
    expect(() => run.read('ext/ext.go')).toThrow();
  });

  it('refuses any other local replace line', () => {
    const run = generate(
      'v3.7.13',
      upstream.replace('replace (\n', 'replace (\n\tgithub.com/x/y => ./third_party/y\n'),
      { 'pkg/config/dynamic/http_config.go': httpConfig },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/unexpected local replace line.*github\.com\/x\/y => \.\/third_party\/y/);
  });

  it('refuses when no file of the release uses the extension module', () => {
    const run = generate('v3.7.13', upstream, { 'pkg/other.go': 'package other\n' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/no file of .* imports github\.com\/traefik\/traefik\/dynamic\/ext/);
  });

  it('refuses a go.mod of another module and a version that is not a v3 release', () => {
    expect(generate('v3.7.13', upstream.replace('traefik/v3\n', 'traefik/v2\n')).status).toBe(1);
    const rc = generate('v3.7.0-rc.1', upstream);
    expect(rc.status).toBe(2);
    expect(rc.stderr).toMatch(/not a v3\.Y\.Z release/);
  });
});
