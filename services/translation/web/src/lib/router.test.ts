import { describe, expect, it } from 'vitest';
import { pathOf, segments } from './router.ts';

describe('pathOf', () => {
  it.each([
    ['', '/'],
    ['#', '/'],
    ['#/', '/'],
    ['#/keys', '/keys'],
    ['#keys', '/keys'],
    ['#/invite/abc?x=1', '/invite/abc'],
  ])('%j → %s', (hash, path) => expect(pathOf(hash)).toBe(path));
});

describe('segments', () => {
  it('splits and decodes', () => {
    expect(segments('/invite/a%2Fb/')).toEqual(['invite', 'a/b']);
    expect(segments('/')).toEqual([]);
  });
});
