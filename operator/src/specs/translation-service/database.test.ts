import { describe, expect, it } from 'vitest';
import { translationServiceSpec } from '../../api/index.ts';
import { cnpgCluster, cnpgState, databaseSecretRef } from './database.ts';
import { migrateEnv, referencedSecretKeys, serveEnv } from './env.ts';
import { fixture } from './fixtures.ts';
import { migrationJob, revisionOf } from './migration-job.ts';

const managed = fixture({ database: { cnpg: { instances: 2, storage: { size: '2Gi', storageClass: 'fast' } } } });
const managedSpec = translationServiceSpec.parse(managed.spec);
const brought = fixture();
const broughtSpec = translationServiceSpec.parse(brought.spec);

describe('database.cnpg', () => {
  it('builds a CloudNativePG Cluster owned by the TranslationService', () => {
    const cluster = cnpgCluster(managed, managedSpec);
    expect(cluster).toMatchObject({
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: {
        name: 'web-db',
        namespace: 'shop',
        ownerReferences: [{ kind: 'TranslationService', name: 'web', controller: true, blockOwnerDeletion: true }],
        labels: { 'app.kubernetes.io/component': 'database', 'app.kubernetes.io/managed-by': 'scriptorium-operator' },
      },
      spec: {
        instances: 2,
        storage: { size: '2Gi', storageClass: 'fast' },
        bootstrap: { initdb: { database: 'translation', owner: 'translation' } },
      },
    });
    expect(cnpgCluster(brought, broughtSpec)).toBeNull();
  });

  it('wires the cluster’s -app Secret into the pods and the migration, and checks no user Secret for it', () => {
    expect(databaseSecretRef(managed, managedSpec)).toEqual({ name: 'web-db-app', key: 'uri' });
    expect(databaseSecretRef(brought, broughtSpec)).toEqual({ name: 'shop-db-app', key: 'uri' });
    const url = (env: ReturnType<typeof serveEnv>) => env.find((e) => e.name === 'DATABASE_URL');
    expect(url(serveEnv(managed, managedSpec))?.valueFrom).toEqual({
      secretKeyRef: { name: 'web-db-app', key: 'uri' },
    });
    expect(url(migrateEnv(managed, managedSpec))?.valueFrom).toEqual({
      secretKeyRef: { name: 'web-db-app', key: 'uri' },
    });
    expect(referencedSecretKeys(managedSpec).map((r) => r.field)).not.toContain('spec.database.secretRef');
    expect(referencedSecretKeys(broughtSpec).map((r) => r.field)).toContain('spec.database.secretRef');
    // The migration revision of a brought database is what it was before managed databases existed.
    expect(migrationJob(brought, broughtSpec).metadata.name).toBe(`web-migrate-${revisionOf(brought, broughtSpec)}`);
    expect(revisionOf(managed, managedSpec)).not.toBe(revisionOf(brought, broughtSpec));
  });

  it('is ready once its primary serves in a healthy phase', () => {
    expect(cnpgState(undefined)).toEqual({ ready: false });
    const cluster = (status: object) => ({
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: 'web-db' },
      status,
    });
    expect(cnpgState(cluster({ instances: 2, readyInstances: 0, phase: 'Setting up primary' })).ready).toBe(false);
    expect(
      cnpgState(
        cluster({ instances: 2, readyInstances: 2, phase: 'Cluster in healthy state', currentPrimary: 'web-db-1' }),
      ),
    ).toEqual({ ready: true, instances: 2, readyInstances: 2, phase: 'Cluster in healthy state', primary: 'web-db-1' });
    expect(cnpgState(cluster({ instances: 2, readyInstances: 1, phase: 'Switchover in progress' })).ready).toBe(false);
  });

  it('the schema takes exactly one of secretRef and cnpg', () => {
    expect(translationServiceSpec.parse(managed.spec).database.cnpg?.instances).toBe(2);
    expect(translationServiceSpec.parse({ image: 'x', database: { cnpg: {} } }).database.cnpg).toEqual({
      instances: 2,
      storage: { size: '1Gi' },
    });
  });
});
