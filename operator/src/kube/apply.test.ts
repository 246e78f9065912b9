import { describe, expect, it } from 'vitest';
import { decide, HASH_ANNOTATION, withHash } from './apply.ts';
import { firstDifference, isSubset } from './diff.ts';
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

  it('compares resource quantities by value, and only resource quantities', () => {
    const container = (resources: unknown) => ({ spec: { containers: [{ name: 'api', resources }] } });
    const written = { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: 2, memory: '1.5Gi' } };
    const canonical = { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '2', memory: '1536Mi' } };
    expect(isSubset(container(written), container(canonical))).toBe(true);
    expect(isSubset(container({ requests: { cpu: '0.5' } }), container({ requests: { cpu: '5' } }))).toBe(false);
    expect(isSubset(container({ limits: { memory: '1Gi' } }), container({ limits: { memory: '1G' } }))).toBe(false);
    // A volume claim's storage request and an emptyDir size limit are quantities too.
    expect(
      isSubset({ resources: { requests: { storage: '1024Mi' } } }, { resources: { requests: { storage: '1Gi' } } }),
    ).toBe(true);
    expect(isSubset({ emptyDir: { sizeLimit: '0.5Gi' } }, { emptyDir: { sizeLimit: '512Mi' } })).toBe(true);
    // Elsewhere the text must match.
    expect(isSubset({ metadata: { labels: { cpu: '0.5' } } }, { metadata: { labels: { cpu: '500m' } } })).toBe(false);
    expect(isSubset({ requests: { cpu: '0.5' } }, { requests: { cpu: '500m' } })).toBe(false);
    expect(firstDifference(container(written), container({ ...canonical, limits: { cpu: '3' } }))).toBe(
      '.spec.containers[0].resources.limits.cpu',
    );
  });
});

describe('decide with quantities', () => {
  it('makes no update when the API server returned the canonical form of the quantities', () => {
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'ns', ownerReferences: [owner] },
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'api', resources: { requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1000m' } } },
            ],
          },
        },
      },
    };
    const hashed = withHash(deployment);
    const live: KubeObject = {
      ...hashed,
      metadata: { ...hashed.metadata, uid: 'd-1', resourceVersion: '7' },
      spec: {
        replicas: 1,
        template: {
          spec: {
            containers: [
              { name: 'api', resources: { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1' } } },
            ],
          },
        },
      },
    };
    expect(decide(deployment, live, 'u-1')).toEqual({ action: 'none' });
    const edited = structuredClone(live) as unknown as {
      spec: { template: { spec: { containers: Array<{ resources: { limits: { cpu: string } } }> } } };
    };
    edited.spec.template.spec.containers[0]!.resources.limits.cpu = '2';
    expect(decide(deployment, edited as unknown as KubeObject, 'u-1')).toEqual({
      action: 'update',
      why: 'drift at .spec.template.spec.containers[0].resources.limits.cpu',
    });
  });
});
