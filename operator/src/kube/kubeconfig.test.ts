import { mkdtempSync, writeFileSync } from 'node:fs';
import type https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadStatic } from './kubeconfig.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function write(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
  writeFileSync(join(dir, 'ca.pem'), 'CA FILE');
  writeFileSync(join(dir, 'token'), 'file-token\n');
  const path = join(dir, 'config');
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'b',
      clusters: [
        { name: 'a', cluster: { server: 'https://wrong:1' } },
        { name: 'b', cluster: { server: 'https://127.0.0.1:6443', ...cluster } },
      ],
      users: [{ name: 'u', user }],
      contexts: [
        { name: 'a', context: { cluster: 'a', user: 'u' } },
        { name: 'b', context: { cluster: 'b', user: 'u' } },
      ],
    }),
  );
  return path;
}

async function options(path: string) {
  const access = loadStatic(path);
  if (!access) return undefined;
  const opts: https.RequestOptions = {};
  await access.applyToHTTPSOptions(opts);
  return { server: access.getCurrentCluster()?.server, opts };
}

describe('loadStatic', () => {
  it('reads the current context: inline CA, client certificate and key', async () => {
    const got = await options(
      write(
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
        { 'certificate-authority-data': b64('CA') },
      ),
    );
    expect(got?.server).toBe('https://127.0.0.1:6443');
    expect(String(got?.opts.ca)).toBe('CA');
    expect(String(got?.opts.cert)).toBe('CERT');
    expect(String(got?.opts.key)).toBe('KEY');
    expect(got?.opts.headers).toBeUndefined();
  });

  it('bearer token, token file and CA file relative to the kubeconfig', async () => {
    const inline = await options(write({ token: 'abc' }, { 'certificate-authority': 'ca.pem' }));
    expect(inline?.opts.headers).toEqual({ authorization: 'Bearer abc' });
    expect(String(inline?.opts.ca)).toBe('CA FILE');
    const file = await options(write({ tokenFile: 'token' }, { 'insecure-skip-tls-verify': true }));
    expect(file?.opts.headers).toEqual({ authorization: 'Bearer file-token' });
    expect(file?.opts.rejectUnauthorized).toBe(false);
  });

  it('leaves exec plugins, auth providers and several KUBECONFIG paths to client-node', async () => {
    expect(loadStatic(write({ exec: { command: 'aws' } }))).toBeUndefined();
    expect(loadStatic(write({ 'auth-provider': { name: 'oidc' } }))).toBeUndefined();
    expect(loadStatic('/a/config:/b/config')).toBeUndefined();
  });

  it('a kubeconfig without its current context is an error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    writeFileSync(join(dir, 'config'), stringify({ 'current-context': 'x', contexts: [] }));
    expect(() => loadStatic(join(dir, 'config'))).toThrow(/no current context/);
  });
});
