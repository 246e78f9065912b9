// The TranslationService on a managed database (spec.database.cnpg) on a real cluster: CloudNativePG installed from
// its release manifest (the operator built from the Go module proxy by tools/kube/build.sh --node, packed by
// tools/cluster/images.sh), the sample TranslationService on a 2-instance CloudNativePG cluster, and a switchover
// (what `kubectl cnpg promote` does: status.targetPrimary) in the middle of a steady translate load; the usage rows
// counted in the database before and after must be exactly the translations that were answered 200.
//
// Runs with E2E_CNPG=1, which make e2e-local sets (E2E_CNPG=0 there leaves it out; the kind suite does not run it,
// its images are not loaded there): E2E_CNPG_IMAGE (the
// operator image, default localhost/scriptorium/cloudnative-pg:<CNPG_VERSION>) and E2E_CNPG_POSTGRES_IMAGE (the
// PostgreSQL operand, default localhost/scriptorium/cnpg-postgres:15). Its own namespace and Helm release, removed
// after; CloudNativePG itself (namespace cnpg-system, its CRDs) stays, as a cluster add-on.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { keysCreateArgs } from '@scriptorium/operator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, repoRoot } from './config.ts';
import { applyCrds, createNamespace, installOperator } from './install.ts';
import {
  condition,
  http,
  type KubeObject,
  kube,
  type PortForward,
  portForward,
  rolloutStatus,
  waitFor,
} from './kube.ts';

const enabled = process.env.E2E_CNPG === '1';
const config = enabled ? loadConfig() : undefined;

const versions = readFileSync(join(repoRoot, 'tools/kube/versions.env'), 'utf8');
const CNPG_VERSION = /^CNPG_VERSION=(\S+)$/m.exec(versions)?.[1] ?? '';
const cnpgImage = process.env.E2E_CNPG_IMAGE ?? `localhost/scriptorium/cloudnative-pg:${CNPG_VERSION}`;
const operandImage = process.env.E2E_CNPG_POSTGRES_IMAGE ?? 'localhost/scriptorium/cnpg-postgres:15';
const ns = `${process.env.E2E_NAME_PREFIX ?? 'e2e'}-cnpg-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const release = ns;
const forwards: PortForward[] = [];
const log = (line: string) => process.stderr.write(`e2e cnpg [${ns}]: ${line}\n`);

/** CloudNativePG's release manifest, where tools/kube/build.sh keeps it (beside the binaries' folder). */
function cnpgManifest(): string {
  const bin = process.env.SCRIPTORIUM_KUBE_BIN ?? dirname(config?.kubectl ?? '');
  const file = join(bin, '..', 'cnpg', CNPG_VERSION, 'cnpg.yaml');
  if (!existsSync(file)) throw new Error(`no CloudNativePG manifest at ${file}: run bash tools/kube/build.sh`);
  // Its operator image is the one built here (no registry is reachable), so it is not pulled again each start.
  return readFileSync(file, 'utf8')
    .replaceAll(`ghcr.io/cloudnative-pg/cloudnative-pg:${CNPG_VERSION.slice(1)}`, cnpgImage)
    .replaceAll('imagePullPolicy: Always', `imagePullPolicy: ${config?.pullPolicy ?? 'IfNotPresent'}`);
}

describe.skipIf(!enabled)('a TranslationService on CloudNativePG (spec.database.cnpg)', () => {
  const k = kube(config ?? ({} as never));
  const wait = { timeoutMs: config?.waitMs ?? 300_000 };
  const psql = async (pod: string, sql: string) =>
    (await k.kubectl(['-n', ns, 'exec', pod, '-c', 'postgres', '--', 'psql', '-d', 'translation', '-tAc', sql])).trim();

  beforeAll(async () => {
    if (!config) return;
    log(`namespace and Helm release ${ns}; CloudNativePG ${CNPG_VERSION} (${cnpgImage}), PostgreSQL ${operandImage}`);
    const started = Date.now();
    await k.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: cnpgManifest() });
    await rolloutStatus(k, 'cnpg-system', 'deployment/cnpg-controller-manager', 300_000);
    await applyCrds(k);
    await createNamespace(k, ns);
    await installOperator(k, config, ns, release);
    log(`CloudNativePG's operator and ours ready in ${Math.round((Date.now() - started) / 1000)} s`);
  }, 900_000);

  afterAll(async () => {
    for (const f of forwards) f.close();
    if (!config) return;
    const started = Date.now();
    const took = (what: string) => log(`${what} after ${Math.round((Date.now() - started) / 1000)} s`);
    await k
      .kubectl(['-n', ns, 'delete', 'translationservices', '--all', '--wait=true', '--timeout=180s'])
      .catch((err: Error) => log(`cleanup: ${err.message}`));
    took('the TranslationService deleted');
    // Its CloudNativePG cluster goes with it, in the background. Its pods are waited for before the namespace is
    // deleted: the namespace controller, finding pods still terminating, checks again only after their grace period
    // (CloudNativePG's stopDelay, 30 minutes by default), and the namespace would stay Terminating that long.
    await k
      .kubectl(['-n', ns, 'wait', '--for=delete', 'pods', '-l', 'cnpg.io/cluster', '--timeout=240s'])
      .catch((err: Error) => log(`cleanup: ${err.message}`));
    took('its PostgreSQL pods gone');
    await k.helm(['uninstall', release, '-n', ns, '--wait', '--timeout', '180s']).catch(() => undefined);
    took('the release uninstalled');
    await k
      .kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=240s'])
      .catch((err: Error) => log(`cleanup: ${err.message}`));
    took('the namespace deleted');
  }, 900_000);

  it('runs on a 2-instance CloudNativePG cluster; a switchover under a translate load loses no usage row', async () => {
    if (!config) return;
    const sample = readFileSync(join(repoRoot, 'deploy/samples/translation-service.yaml'), 'utf8')
      .split(/^---$/m)
      .find((doc) => doc.includes('kind: TranslationService'))
      ?.replaceAll('scriptorium/translation:dev', config.translationImage)
      .replaceAll('imagePullPolicy: IfNotPresent', `imagePullPolicy: ${config.pullPolicy}`)
      .replace(
        /database:\n\s+secretRef: \{[^}]*\}/,
        `database:\n    cnpg: { instances: 2, storage: { size: 1Gi }, imageName: "${operandImage}" }`,
      );
    expect(sample).toContain('cnpg: { instances: 2');
    await k.kubectl(['-n', ns, 'apply', '-f', '-'], { input: sample });

    // The operator's Cluster, CloudNativePG's two instances, then the service on its -app Secret.
    const ts = await waitFor(
      'TranslationService Ready=True on the CloudNativePG cluster',
      async () => {
        const got = await k.getJson(['-n', ns, 'translationservice', 'translation']);
        return condition(got, 'Ready')?.status === 'True' ? got : undefined;
      },
      { timeoutMs: Math.max(wait.timeoutMs, 600_000) },
    );
    const status = (ts.status ?? {}) as { database?: { cluster?: string; readyInstances?: number; primary?: string } };
    expect(status.database).toMatchObject({ cluster: 'translation-db', readyInstances: 2 });
    const cluster = await k.getJson<KubeObject & { metadata: { ownerReferences?: Array<{ kind: string }> } }>([
      '-n',
      ns,
      'clusters.postgresql.cnpg.io',
      'translation-db',
    ]);
    expect(cluster.metadata.ownerReferences?.[0]?.kind).toBe('TranslationService');

    const issued = await k.kubectl(keysCreateArgs(ns, 'translation', ['--user', 'cnpg-e2e@example.com']));
    const { apiKey } = JSON.parse(issued) as { apiKey: string };
    const forward = await portForward(config, ns, 'service/translation', 80);
    forwards.push(forward);
    await waitFor(
      'GET /readyz',
      async () => ((await http(forward.port, '/readyz')).status === 200 ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    const primary = async () =>
      ((await k.getJson(['-n', ns, 'clusters.postgresql.cnpg.io', 'translation-db'])).status as {
        currentPrimary?: string;
        targetPrimary?: string;
        phase?: string;
      }) ?? {};
    const before = await primary();
    const rowsBefore = Number(
      await psql(before.currentPrimary ?? '', "SELECT count(*) FROM usage_events WHERE kind = 'translate'"),
    );

    // A steady load (4 requests/s, one at a time), a switchover in the middle, then more load on the new primary.
    let ok = 0;
    let failed = 0;
    let stop = false;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const answer = await http(forward.port, '/api/v1/translate', {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}` },
          body: {
            sourceLocale: 'en',
            targetLocale: 'fr',
            tier: 'cheap',
            items: [{ id: 'a', text: `Switchover request ${i}`, isIcu: false }],
            style: {},
            glossary: [],
          },
          timeoutMs: 30_000,
        }).catch(() => ({ status: 0 }));
        if (answer.status === 200) ok++;
        else failed++;
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    // The load runs on each primary until 10 translations were answered there (how long that takes depends on the
    // machine: CI runs this beside the rest of the suite and kind's); waitFor fails the test if they never are.
    const answered = (count: number, where: string) =>
      waitFor(`${count} translations answered ${where}`, async () => (ok >= count ? true : undefined), {
        ...wait,
        intervalMs: 250,
        describe: () => `${ok} answered 200, ${failed} not`,
      });
    await answered(10, 'before the switchover');
    const target = before.currentPrimary === 'translation-db-1' ? 'translation-db-2' : 'translation-db-1';
    const okBefore = ok;
    log(`switchover ${before.currentPrimary} → ${target} after ${ok} translations`);
    await k.kubectl([
      '-n',
      ns,
      'patch',
      'clusters.postgresql.cnpg.io',
      'translation-db',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { targetPrimary: target, targetPrimaryTimestamp: new Date().toISOString() } }),
    ]);
    await waitFor(
      `${target} the primary, the cluster healthy`,
      async () => {
        const s = await primary();
        return s.currentPrimary === target && s.phase === 'Cluster in healthy state' ? s : undefined;
      },
      wait,
    );
    const okSwitched = ok;
    await answered(okSwitched + 10, 'on the new primary');
    stop = true;
    await load;
    log(
      `${ok} translations answered 200 (${okBefore} before the switchover, ${ok - okSwitched} after it), ${failed} not`,
    );
    // The load ran on both primaries: translations answered before the switchover and after the new primary took over.
    expect(okBefore).toBeGreaterThanOrEqual(10);
    expect(ok - okSwitched).toBeGreaterThanOrEqual(10);

    // Exactly one usage row per answered translation: none lost in the switchover, none for a refused request.
    const rowsAfter = Number(await psql(target, "SELECT count(*) FROM usage_events WHERE kind = 'translate'"));
    expect(rowsAfter - rowsBefore).toBe(ok);
    // The operator followed the switchover in status, and rolled nothing.
    const after = await waitFor(
      'status.database.primary follows the switchover',
      async () => {
        const got = await k.getJson(['-n', ns, 'translationservice', 'translation']);
        const db = (got.status as { database?: { primary?: string; ready?: boolean } }).database;
        return db?.primary === target && db.ready ? got : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(condition(after, 'Ready')?.status).toBe('True');
  }, 1_800_000);
});
