import { describe, expect, it } from 'vitest';
import { firstDifference } from './diff.ts';
import { microTime } from './events.ts';
import { RESOURCES, resourceForKind, resourcePath } from './resources.ts';

describe('resourcePath', () => {
  it('builds core, group, cluster-scoped and subresource paths', () => {
    expect(resourcePath(RESOURCES.Service, 'ns', 'web')).toBe('/api/v1/namespaces/ns/services/web');
    expect(resourcePath(RESOURCES.Deployment, 'ns')).toBe('/apis/apps/v1/namespaces/ns/deployments');
    expect(resourcePath(RESOURCES.Namespace, undefined, 'x')).toBe('/api/v1/namespaces/x');
    expect(resourcePath(RESOURCES.TranslationService, 'ns', 'web', 'status')).toBe(
      '/apis/scriptorium.dev/v1alpha1/namespaces/ns/translationservices/web/status',
    );
    expect(resourcePath(RESOURCES.Deployment)).toBe('/apis/apps/v1/deployments');
    expect(resourceForKind('batch/v1', 'CronJob').plural).toBe('cronjobs');
    expect(() => resourceForKind('v9', 'Nope')).toThrow(/unknown resource/);
  });
});

describe('helpers', () => {
  it('formats MicroTime with six fractional digits', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });
  it('names the first differing path', () => {
    expect(firstDifference({ a: { b: [1, { c: 2 }] } }, { a: { b: [1, { c: 3 }] } })).toBe('.a.b[1].c');
    expect(firstDifference({ a: 1 }, { a: 1, z: 2 })).toBeUndefined();
  });
});
