import { describe, expect, it } from 'vitest';
import { chooseEncoding, entryTags } from './assets.ts';
import type { Manifest } from './manifest.ts';

describe('chooseEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.5, gzip;q=0.8', 'gzip'],
    ['br;q=1.0, gzip;q=0.8', 'br'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['gzip;q=0, *', 'br'],
    ['identity', 'identity'],
    ['deflate', 'identity'],
    ['GZIP', 'gzip'],
    ['br;q=nonsense, gzip', 'gzip'],
  ] as const)('%j → %s', (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });
});

describe('entryTags', () => {
  const manifest: Manifest = {
    version: 1,
    entries: { app: { script: 'app-AAAAAAAA.js', styles: ['app-BBBBBBBB.css'], preload: ['chunk-CCCCCCCC.js'] } },
    files: {
      'app-AAAAAAAA.js': {
        contentType: 'text/javascript',
        bytes: 1,
        gzipBytes: 1,
        brotliBytes: 1,
        integrity: 'sha384-a',
      },
      'app-BBBBBBBB.css': { contentType: 'text/css', bytes: 1, gzipBytes: 1, brotliBytes: 1, integrity: 'sha384-b' },
      'chunk-CCCCCCCC.js': {
        contentType: 'text/javascript',
        bytes: 1,
        gzipBytes: 1,
        brotliBytes: 1,
        integrity: 'sha384-c',
      },
    },
  };

  it('writes the stylesheet, the preloads and the module script, each with the nonce and its integrity', () => {
    expect(entryTags(manifest, 'app', 'n0nce+/=').split('\n')).toEqual([
      '<link rel="stylesheet" href="/assets/app-BBBBBBBB.css" integrity="sha384-b" nonce="n0nce+/=">',
      '<link rel="modulepreload" href="/assets/chunk-CCCCCCCC.js" integrity="sha384-c" nonce="n0nce+/=">',
      '<script type="module" src="/assets/app-AAAAAAAA.js" integrity="sha384-a" nonce="n0nce+/="></script>',
    ]);
  });

  it('escapes what it puts in an attribute', () => {
    expect(entryTags(manifest, 'app', '"><script>')).toContain('nonce="&quot;&gt;&lt;script&gt;"');
  });

  it('puts the URLs under the manifest base path when the build had one', () => {
    const tags = entryTags({ ...manifest, base: '/ui/assets/' }, 'app', 'n');
    expect(tags).toContain('href="/ui/assets/');
    expect(tags).toContain('src="/ui/assets/');
    expect(tags).not.toMatch(/"\/assets\//);
  });

  it('refuses an unknown entry', () => {
    expect(() => entryTags(manifest, 'console', 'n')).toThrow(/no entry console/);
  });
});
