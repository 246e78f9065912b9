import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../kube/types.ts';
import { fixture, fullSpec } from '../../specs/translation-service/fixtures.ts';
import { service } from '../../specs/translation-service/network.ts';
import { needsReconcile, ownerKey, referencedSecretNames } from './predicates.ts';

describe('predicates', () => {
  it('maps an owned child to its TranslationService key, ignores others', () => {
    expect(ownerKey(service(fixture()))).toBe('shop/web');
    expect(ownerKey({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'x', namespace: 'shop' } })).toBeUndefined();
    const rs: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        namespace: 'shop',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'u', controller: true }],
      },
    };
    expect(ownerKey(rs)).toBeUndefined();
  });

  it('reconciles on spec, deletion and finalizer changes, not on status-only updates', () => {
    const base = fixture() as unknown as KubeObject;
    const statusOnly = { ...base, metadata: { ...base.metadata, resourceVersion: '9' }, status: { url: 'x' } };
    expect(needsReconcile(statusOnly, base)).toBe(false);
    expect(needsReconcile({ ...base, metadata: { ...base.metadata, generation: 2 } }, base)).toBe(true);
    expect(needsReconcile({ ...base, metadata: { ...base.metadata, deletionTimestamp: 'now' } }, base)).toBe(true);
    expect(needsReconcile({ ...base, metadata: { ...base.metadata, finalizers: [] } }, base)).toBe(false);
    expect(needsReconcile({ ...base, metadata: { ...base.metadata, finalizers: ['a'] } }, base)).toBe(true);
  });

  it('lists the Secrets a spec references', () => {
    expect([...referencedSecretNames(fixture(fullSpec))]).toEqual(['shop-db-app', 'llm', 'oauth', 'billing']);
  });
});
