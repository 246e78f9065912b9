import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBackupConfig } from '@scriptorium/ledger-node';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../kube/types.ts';
import { backupCronJob, backupPrefix, restoreInitContainer, verifyCronJob } from './backup.ts';
import { fixture, parsedSpec } from './fixtures.ts';
import { validatorStatefulSet } from './statefulset.ts';

const store = {
  endpoint: 'https://s3.storage.svc:9000',
  bucket: 'ledger-backups',
  credentials: { accessKeyId: { name: 's3', key: 'id' }, secretAccessKey: { name: 's3', key: 'secret' } },
  caSecretRef: { name: 's3-ca', key: 'ca.crt' },
};
const backedUp = fixture({ backup: { ...store, schedule: '*/10 * * * *', verify: { schedule: '@daily' } } });
const restored = fixture({
  genesis: undefined,
  bootstrap: { fromBackup: { ...store, prefix: 'chain/ledger', identitySecretRef: { name: 'ledger-identity' } } },
});
const validators = ['ledger-v0', 'ledger-v1'];

const pod = (cj: KubeObject) => cj.spec.jobTemplate.spec.template.spec;
type Env = Array<{ name: string; value?: string }>;

/** The env as the image would see it, with each mounted file written where the pod would have it. */
const filesDir = mkdtempSync(join(tmpdir(), 'backup-env-'));
afterAll(() => rmSync(filesDir, { recursive: true, force: true }));

function imageSees(env: Env): Record<string, string> {
  const dir = filesDir;
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.value === undefined) continue;
    if (e.name.endsWith('_FILE') && e.name !== 'BACKUP__RESULT_FILE') {
      const file = join(dir, e.name);
      writeFileSync(file, 'x');
      out[e.name] = file;
    } else out[e.name] = e.value;
  }
  return out;
}

describe('backup CronJobs', () => {
  const spec = parsedSpec(backedUp);

  it('backup and drill run the ledger-node image with settings the image reads', () => {
    const backup = backupCronJob(backedUp, spec, validators) as KubeObject;
    const drill = verifyCronJob(backedUp, spec, validators) as KubeObject;
    expect(backup.metadata).toMatchObject({
      name: 'ledger-backup',
      ownerReferences: [{ kind: 'LedgerCluster', name: 'ledger' }],
    });
    expect(backup.spec).toMatchObject({ schedule: '*/10 * * * *', concurrencyPolicy: 'Forbid' });
    expect(drill.spec.schedule).toBe('@daily');
    expect(pod(backup).containers[0].args).toEqual(['backup']);
    expect(pod(drill).containers[0].args).toEqual(['backup-verify']);
    for (const cj of [backup, drill]) {
      const env = pod(cj).containers[0].env as Env;
      const { settings } = loadBackupConfig(imageSees(env));
      expect(settings).toMatchObject({
        BACKUP__ENDPOINT: 'https://s3.storage.svc:9000',
        BACKUP__BUCKET: 'ledger-backups',
        BACKUP__PREFIX: 'chain/ledger',
        BACKUP__NODE_URL: 'https://ledger-v0.chain.svc:8000,https://ledger-v1.chain.svc:8000',
        BACKUP__RESULT_FILE: '/dev/termination-log',
      });
      // Credentials only as mounted files, never as an env value; the CA's certificate only, never its key.
      expect(env.some((e) => /ACCESS_KEY/.test(e.name) && !e.name.endsWith('_FILE'))).toBe(false);
      const volumes = pod(cj).volumes as Array<{ name: string; secret?: { items: Array<{ key: string }> } }>;
      expect(volumes.find((v) => v.name === 'node-ca')?.secret?.items).toEqual([{ key: 'tls.crt', path: 'ca.crt' }]);
      expect(pod(cj).containers[0].terminationMessagePolicy).toBe('File');
      expect(pod(cj).securityContext).toMatchObject({ runAsNonRoot: true });
      expect(pod(cj).automountServiceAccountToken).toBe(false);
    }
    expect((pod(drill).containers[0].env as Env).find((e) => e.name === 'BACKUP__SCRATCH_DIR')?.value).toBe(
      '/var/lib/ledger-node/scratch',
    );
  });

  it('none without spec.backup; no drill without verify', () => {
    const plain = fixture();
    expect(backupCronJob(plain, parsedSpec(plain), validators)).toBeNull();
    const noDrill = fixture({ backup: store });
    expect(verifyCronJob(noDrill, parsedSpec(noDrill), validators)).toBeNull();
    expect(backupCronJob(noDrill, parsedSpec(noDrill), validators)?.spec.schedule).toBe('0 * * * *');
    expect(backupPrefix(noDrill, {})).toBe('chain/ledger');
    expect(backupPrefix(noDrill, { prefix: 'x/y' })).toBe('x/y');
  });
});

describe('restore init container', () => {
  it('only with bootstrap.fromBackup: restores the data volume before the node starts', () => {
    const spec = parsedSpec(restored);
    const sts = validatorStatefulSet(restored, spec, 'ledger-v0');
    const init = sts.spec.template.spec.initContainers as Array<{
      args: string[];
      env: Env;
      volumeMounts: Array<{ name: string }>;
    }>;
    expect(init).toHaveLength(1);
    expect(init[0]?.args).toEqual(['restore']);
    expect(init[0]?.volumeMounts.map((m) => m.name)).toContain('data');
    const { settings } = loadBackupConfig(imageSees(init[0]?.env as Env));
    expect(settings).toMatchObject({ BACKUP__PREFIX: 'chain/ledger', NODE_DATA_DIR: '/var/lib/ledger-node/data' });
    // Every volume the init container mounts exists once in the pod.
    const names = (sts.spec.template.spec.volumes as Array<{ name: string }>).map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const m of init[0]?.volumeMounts ?? []) if (m.name !== 'data') expect(names).toContain(m.name);
    const plain = fixture();
    expect(restoreInitContainer(plain, parsedSpec(plain))).toBeNull();
    expect(
      validatorStatefulSet(plain, parsedSpec(plain), 'ledger-v0').spec.template.spec.initContainers,
    ).toBeUndefined();
  });
});
