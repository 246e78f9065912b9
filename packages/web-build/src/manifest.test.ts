import { describe, expect, it } from 'vitest';
import { contentTypeOf, parseManifest } from './manifest.ts';

const file = {
  contentType: 'text/javascript; charset=utf-8',
  bytes: 10,
  gzipBytes: 8,
  brotliBytes: 7,
  integrity: 'sha384-AbC+/=',
};
const good = {
  version: 1,
  entries: { app: { script: 'app-ABCDEFGH.js', styles: [], preload: [] } },
  files: { 'app-ABCDEFGH.js': file },
};

describe('parseManifest', () => {
  it('accepts a well-formed manifest', () => {
    expect(parseManifest(structuredClone(good))).toEqual(good);
  });

  it.each([
    ['no version', { ...good, version: 2 }, /version 1/],
    ['a file name with a folder', { ...good, files: { '../app-ABCDEFGH.js': file } }, /bad file name/],
    ['a file name without a hash', { ...good, files: { 'app.js': file } }, /bad file name/],
    ['an unknown kind of file', { ...good, files: { 'app-ABCDEFGH.html': file } }, /bad file name/],
    ['a negative size', { ...good, files: { 'app-ABCDEFGH.js': { ...file, bytes: -1 } } }, /bad record/],
    [
      'an integrity that is not sha384',
      { ...good, files: { 'app-ABCDEFGH.js': { ...file, integrity: 'md5-x' } } },
      /bad record/,
    ],
    [
      'an entry naming a file that is not listed',
      { ...good, entries: { app: { script: 'app-ZZZZZZZZ.js', styles: [], preload: [] } } },
      /not in files/,
    ],
    ['an entry without styles', { ...good, entries: { app: { script: 'app-ABCDEFGH.js', preload: [] } } }, /bad entry/],
  ])('refuses %s', (_what, manifest, message) => {
    expect(() => parseManifest(manifest)).toThrow(message);
  });
});

describe('contentTypeOf', () => {
  it('accepts a base URL path, refuses anything else as one', () => {
    expect(parseManifest({ ...good, base: '/ui/assets/' }).base).toBe('/ui/assets/');
    for (const base of ['ui/assets/', '/ui/assets', '//evil.example/', '/a/../b/', 5])
      expect(() => parseManifest({ ...good, base })).toThrow(/base/);
  });

  it('knows the kinds the build writes, and nothing else', () => {
    expect(contentTypeOf('app-X.js')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('app-X.css')).toBe('text/css; charset=utf-8');
    expect(contentTypeOf('app-X.html')).toBeUndefined();
  });
});
