import { describe, expect, it } from 'vitest';
import { decide, HASH_ANNOTATION, withHash } from './apply.ts';
import { isSubset } from './diff.ts';
import type { KubeObject } from './types.ts';

const owner = {
  apiVersion: 'scriptorium.dev/v1alpha1',
  kind: 'TranslationService',
  name: 'web',
  uid: 'u-1',
  controller: true,
};
const desired: KubeObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'ns', labels: { app: 'web' }, ownerReferences: [owner] },
  spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }], selector: { app: 'web' } },
};

/** What the API server returns after applying `desired`: defaults and server fields added. */
function served(obj: KubeObject): KubeObject {
  const applied = withHash(obj);
  return {
    ...applied,
    metadata: { ...applied.metadata, uid: 'child', resourceVersion: '7', managedFields: [] },
    spec: {
      ...applied.spec,
      ports: applied.spec.ports.map((p: object) => ({ protocol: 'TCP', ...p })),
      clusterIP: '10.0.0.1',
      type: 'ClusterIP',
    },
    status: { loadBalancer: {} },
  };
}

describe('decide', () => {
  it('creates an absent object', () => {
    expect(decide(desired, undefined, 'u-1')).toEqual({ action: 'create' });
  });

  it('skips an object whose only differences are server defaults', () => {
    expect(decide(desired, served(desired), 'u-1')).toEqual({ action: 'none' });
  });

  it('updates when the desired state changed, even when it only removes a field', () => {
    const fewer = { ...desired, metadata: { ...desired.metadata, labels: {} } };
    expect(decide(fewer, served(desired), 'u-1')).toMatchObject({ action: 'update', why: 'desired state changed' });
  });

  it('updates when someone edited a field we own (drift)', () => {
    const drifted = served(desired);
    drifted.spec.selector = { app: 'other' };
    expect(decide(desired, drifted, 'u-1')).toMatchObject({ action: 'update', why: 'drift at .spec.selector.app' });
  });

  it('refuses an object controlled by someone else', () => {
    const foreign = served({
      ...desired,
      metadata: { ...desired.metadata, ownerReferences: [{ ...owner, uid: 'x' }] },
    });
    expect(decide(desired, foreign, 'u-1')).toEqual({ action: 'refuse', controller: 'TranslationService/web' });
    expect(decide(desired, { ...served(desired), metadata: { name: 'web' } }, 'u-1').action).toBe('refuse');
  });

  it('deletes for a null desired object only when we control it', () => {
    expect(decide(null, served(desired), 'u-1')).toEqual({ action: 'delete' });
    expect(decide(null, served(desired), 'someone-else')).toEqual({ action: 'none' });
    expect(decide(null, undefined, 'u-1')).toEqual({ action: 'none' });
  });

  it('hashes independently of key order and ignores an old hash annotation', () => {
    const a = withHash(desired);
    const reordered = withHash({ spec: desired.spec, metadata: desired.metadata, kind: 'Service', apiVersion: 'v1' });
    expect(a.metadata.annotations?.[HASH_ANNOTATION]).toBe(reordered.metadata.annotations?.[HASH_ANNOTATION]);
    expect(withHash(a).metadata.annotations).toEqual(a.metadata.annotations);
  });
});

describe('isSubset', () => {
  it('compares arrays element by element with equal length', () => {
    expect(isSubset([{ a: 1 }], [{ a: 1, b: 2 }])).toBe(true);
    expect(isSubset([{ a: 1 }], [{ a: 1 }, { a: 2 }])).toBe(false);
    expect(isSubset({ a: 1 }, { a: '1' })).toBe(true);
    expect(isSubset({ a: 'x' }, {})).toBe(false);
  });
});
