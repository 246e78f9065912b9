import { describe, expect, it } from 'vitest';
import { cacheDir, kubeBinary, kubeBinDir, parseVersions } from './binaries.ts';

describe('parseVersions', () => {
  it('reads KEY=value lines and skips comments and blanks', () => {
    expect(parseVersions('# c\n\nKUBE_VERSION=v1.34.4\nETCD_VERSION=v3.5.35\n')).toEqual({
      KUBE_VERSION: 'v1.34.4',
      ETCD_VERSION: 'v3.5.35',
    });
  });

  it('refuses a line it cannot read', () => {
    expect(() => parseVersions('KUBE_VERSION = v1')).toThrow(/cannot read line/);
  });

  it('reads the repository versions.env', () => {
    expect(kubeBinDir({ SCRIPTORIUM_CACHE: '/c' })).toMatch(/^\/c\/kube\/v1\.\d+\.\d+\/bin$/);
  });
});

describe('kubeBinDir', () => {
  it('uses the same layout as tools/kube/build.sh', () => {
    expect(kubeBinDir({ SCRIPTORIUM_CACHE: '/c' }, 'KUBE_VERSION=v1.34.4')).toBe('/c/kube/v1.34.4/bin');
    expect(kubeBinDir({ XDG_CACHE_HOME: '/x' }, 'KUBE_VERSION=v1.33.1')).toBe('/x/scriptorium/kube/v1.33.1/bin');
  });

  it('prefers SCRIPTORIUM_KUBE_BIN', () => {
    expect(kubeBinDir({ SCRIPTORIUM_KUBE_BIN: '/opt/k', SCRIPTORIUM_CACHE: '/c' }, 'KUBE_VERSION=v1')).toBe('/opt/k');
  });

  it('falls back to ~/.cache', () => {
    expect(cacheDir({})).toMatch(/\/\.cache\/scriptorium$/);
  });
});

describe('kubeBinary', () => {
  it('says to run make kube-bins when a binary is missing', () => {
    expect(() => kubeBinary('etcd', { SCRIPTORIUM_KUBE_BIN: '/nonexistent-kube-bin' })).toThrow(/make kube-bins/);
  });
});
