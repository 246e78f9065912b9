// GET / and GET /assets/:file over HTTP (app.inject): the page's strict CSP and its nonce-bearing, integrity-checked
// tags for the built files; the files themselves, compressed and cached for a year; nothing else under /assets/.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Manifest } from '@scriptorium/web-build';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_DIST } from '../src/web/paths.ts';
import { ensureWebBuilt } from './browser.ts';
import { type Harness, startHarness } from './harness.ts';

let h: Harness;
let manifest: Manifest;
beforeAll(async () => {
  manifest = (await ensureWebBuilt()).manifest;
  h = await startHarness({
    provider: 'pseudo',
    env: { RATE_LIMITS: JSON.stringify([{ route: '/assets/:file', requestsPerMinute: 30 }]) },
  });
});
afterAll(async () => h?.close());

const app = () => manifest.entries.app!;

describe('GET /', () => {
  it('200 HTML with a strict nonce-based CSP, a fresh nonce per response', async () => {
    const a = await h.app.inject({ method: 'GET', url: '/' });
    const b = await h.app.inject({ method: 'GET', url: '/' });
    expect(a.statusCode).toBe(200);
    expect(a.headers['content-type']).toContain('text/html');
    expect(a.headers['cache-control']).toBe('no-store');
    const csp = String(a.headers['content-security-policy']);
    expect(csp.split('; ')).toEqual([
      "default-src 'none'",
      expect.stringMatching(/^script-src 'nonce-[A-Za-z0-9+/=]{24}' 'strict-dynamic'$/),
      expect.stringMatching(/^style-src 'nonce-[A-Za-z0-9+/=]{24}'$/),
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
      "object-src 'none'",
    ]);
    expect(b.headers['content-security-policy']).not.toBe(csp);
    const nonce = /'nonce-([^']+)'/.exec(csp)![1]!;
    const { script, styles } = app();
    const sri = (f: string) => manifest.files[f]!.integrity;
    expect(a.body).toContain(
      `<script type="module" src="/assets/${script}" integrity="${sri(script)}" nonce="${nonce}"></script>`,
    );
    expect(a.body).toContain(
      `<link rel="stylesheet" href="/assets/${styles[0]}" integrity="${sri(styles[0]!)}" nonce="${nonce}">`,
    );
  });

  it('carries nothing inline: every script has a src, no style element or attribute, no handler', async () => {
    const { body } = await h.app.inject({ method: 'GET', url: '/' });
    expect(body.match(/<script\b[^>]*>/g)?.every((tag) => / src="\/assets\//.test(tag))).toBe(true);
    expect(body).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    expect(body).not.toMatch(/https?:\/\//);
  });
});

describe('GET /assets/:file', () => {
  it('answers each built file, brotli or gzip as accepted, cached for a year and integrity-checked', async () => {
    for (const name of Object.keys(manifest.files)) {
      const onDisk = readFileSync(join(WEB_DIST, 'assets', name));
      const br = await h.app.inject({
        method: 'GET',
        url: `/assets/${name}`,
        headers: { 'accept-encoding': 'gzip, br' },
      });
      expect(br.statusCode).toBe(200);
      expect(br.headers).toMatchObject({
        'content-encoding': 'br',
        'cache-control': 'public, max-age=31536000, immutable',
        vary: 'accept-encoding',
        'x-content-type-options': 'nosniff',
      });
      expect(br.headers['content-type']).toBe(manifest.files[name]!.contentType);
      const plain = brotliDecompressSync(br.rawPayload);
      expect(plain.equals(onDisk)).toBe(true);
      expect(`sha384-${createHash('sha384').update(plain).digest('base64')}`).toBe(manifest.files[name]!.integrity);
      const gz = await h.app.inject({ method: 'GET', url: `/assets/${name}`, headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.rawPayload).equals(onDisk)).toBe(true);
    }
    const identity = await h.app.inject({
      method: 'GET',
      url: `/assets/${app().script}`,
      headers: { 'accept-encoding': 'identity' },
    });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.rawPayload.byteLength).toBe(manifest.files[app().script]!.bytes);
  });

  it('404 for anything the manifest does not name', async () => {
    for (const url of [
      '/assets/manifest.json',
      '/assets/..%2Fmanifest.json',
      '/assets/app-AAAAAAAA.js',
      `/assets/${app().script}.gz`,
      '/assets/',
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
  });

  it('is rate-limited per IP, with Retry-After', async () => {
    let last = await h.app.inject({ method: 'GET', url: `/assets/${app().script}` });
    for (let i = 0; i < 40 && last.statusCode === 200; i++) {
      last = await h.app.inject({ method: 'GET', url: `/assets/${app().script}` });
    }
    expect(last.statusCode).toBe(429);
    expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
  });
});
