// One journey of the end-to-end suite, as each journey file sets it up: a namespace of its own and a Helm release of
// the same unique name, whose operator watches only that namespace; steps in order, each part failing at once after
// one of its steps failed (instead of waiting out every later wait); at the first failure, what the cluster looked
// like; afterAll removes the release and the namespace even when a step failed. The journeys run side by side.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type E2eConfig, loadConfig, repoRoot, SUITE_RESOURCES } from './config.ts';
import { applyCrds, createNamespace, installOperator, refuseClusterWideOperator } from './install.ts';
import { type Kube, type KubeList, type KubeObject, kube, rolloutStatus, waitFor } from './kube.ts';
import { type Pod, podReady } from './ledger.ts';

export interface Journey {
  config: E2eConfig;
  k: Kube;
  /** The namespace, also the Helm release's name. */
  ns: string;
  operatorName: string;
  /** Each wait's bound (E2E_WAIT_SECONDS). */
  wait: { timeoutMs: number };
  log(line: string): void;
  /** Closed by afterAll, before the release and the namespace go: port-forwards, servers on this host. */
  closeAtEnd(close: () => unknown): void;
  /** A part of the journey: once one of its steps failed, the later ones fail at once (`not run: …`). */
  part(name: string): (step: string, body: () => Promise<void>) => Promise<void>;
}

/** A file of the repository, read (manifests, samples). */
export const manifest = (file: string): string => readFileSync(join(repoRoot, file), 'utf8');

/** A manifest of the repository with the suite's CPU request (SUITE_RESOURCES) in each `requests: { cpu: … }`. */
export function withSuiteCpu(file: string): string {
  const text = manifest(file);
  const cpu = /(requests: \{ ?cpu: )\d+m/g;
  if (!cpu.test(text)) throw new Error(`${file} sets no requests: { cpu: … } to lower for the suite`);
  return text.replace(cpu, `$1${SUITE_RESOURCES.requests.cpu}`);
}

/**
 * Registers the journey's hooks and returns what its steps use. `label` names it in the log and the namespace
 * (`<prefix>-<label>-<unique>`); `objects` are the kinds shown at the first failure, `describe` the objects described.
 */
export function startJourney(label: string, show: { objects: string; describe?: string[] }): Journey {
  const config = loadConfig();
  const k = kube(config);
  const ns = `${config.namePrefix}-${label}-${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const operatorName = `${ns}-scriptorium-operator`;
  const log = (line: string) => process.stderr.write(`e2e ${label} [${ns}]: ${line}\n`);
  const closers: (() => unknown)[] = [];
  let failed = false;

  beforeAll(async () => {
    log(`namespace and Helm release ${ns}; kubectl ${config.kubectl}, helm ${config.helm}`);
    await refuseClusterWideOperator(k);
    await createNamespace(k, ns);
  }, 120_000);

  afterEach(async (ctx) => {
    // What the cluster looked like at the first failure (before the clean-up removes it).
    if (ctx.task.result?.state !== 'fail' || failed) return;
    failed = true;
    const print = async (title: string, args: string[]) => {
      const out = await k.kubectl(args).catch((err: Error) => err.message);
      process.stderr.write(`--- ${title}\n${out.split('\n').slice(-80).join('\n')}\n`);
    };
    await print('objects', ['-n', ns, 'get', `${show.objects},all,pvc`, '-o', 'wide']);
    await print('events', ['-n', ns, 'get', 'events', '--sort-by=.lastTimestamp']);
    await print('operator log', ['-n', ns, 'logs', `deployment/${operatorName}`, '--tail=60']);
    for (const object of show.describe ?? []) await print(object, ['-n', ns, 'describe', ...object.split('/')]);
    // A pod that is not ready says why in its own log, or in the log of the container that ran before a restart.
    const pods = await k.getJson<KubeList<Pod>>(['-n', ns, 'pods']).catch(() => ({ items: [] as Pod[] }));
    for (const pod of pods.items.filter((p) => !podReady(p) && p.status.phase !== 'Succeeded')) {
      const name = pod.metadata.name;
      await print(`pod ${name}: ${JSON.stringify(pod.status.containerStatuses ?? pod.status.phase)}`, [
        '-n',
        ns,
        'logs',
        name,
        '--all-containers',
        '--tail=30',
      ]);
      if (pod.status.containerStatuses?.some((c) => c.restartCount > 0)) {
        await print(`pod ${name}, before its last restart`, ['-n', ns, 'logs', name, '--previous', '--tail=30']);
      }
    }
  });

  afterAll(async () => {
    for (const close of closers) await Promise.resolve(close()).catch((err) => log(`closing: ${err}`));
    // The last step deletes everything and checks it; this is the safety net when a step failed before it.
    await k.helm(['uninstall', ns, '-n', ns, '--ignore-not-found', '--wait', '--timeout', '180s']).catch((err) => {
      log(`helm uninstall: ${err instanceof Error ? err.message : err}`);
    });
    await k
      .kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=240s'])
      .catch((err) => log(`delete namespace ${ns}: ${err instanceof Error ? err.message : err}`));
  }, 900_000);

  return {
    config,
    k,
    ns,
    operatorName,
    wait: { timeoutMs: config.waitMs },
    log,
    closeAtEnd: (close) => closers.push(close),
    part(name) {
      let broken: string | undefined;
      return async (step, body) => {
        if (broken) throw new Error(`not run: the earlier step "${broken}" of ${name} failed`);
        try {
          await body();
        } catch (err) {
          broken = step;
          throw err;
        }
      };
    },
  };
}

/** The first step of every journey: the checkout's CRDs and the operator chart; the operator holds its Lease. */
export function itInstallsTheOperator(j: Journey, step: ReturnType<Journey['part']>): void {
  it('installs the CRDs and the operator chart with helm; the operator holds its Lease', () =>
    step('operator', async () => {
      const { k, ns, config, operatorName } = j;
      await applyCrds(k);
      await installOperator(k, config, ns);
      await rolloutStatus(k, ns, `deployment/${operatorName}`, config.waitMs);
      const holder = await waitFor(
        'the operator to hold its leader Lease',
        async () => {
          const lease = await k.getJson<{ spec: { holderIdentity?: string } }>([
            '-n',
            ns,
            'lease',
            'scriptorium-operator',
          ]);
          return lease.spec.holderIdentity || undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(holder).toMatch(new RegExp(`^${operatorName}-`));
    }));
}

/**
 * The last step of every journey: its custom resources (`kinds`) deleted, what the operator made garbage-collected,
 * the release uninstalled, the namespace gone, nothing left behind (the CRDs stay, as Helm keeps them by design).
 */
export function itDeletesEverything(j: Journey, kinds: string): void {
  it('deleting everything leaves nothing behind (the CRDs stay, as Helm keeps them by design)', async () => {
    const { k, ns, operatorName, wait } = j;
    await k.kubectl(['-n', ns, 'delete', kinds, '--all', '--wait=true', '--timeout=180s']);
    await waitFor(
      "the operator's objects garbage-collected",
      async () => {
        const left = await k.kubectl([
          '-n',
          ns,
          'get',
          'deployments,statefulsets,cronjobs,jobs,services,secrets,configmaps',
          '-l',
          'app.kubernetes.io/managed-by=scriptorium-operator',
          '-o',
          'name',
        ]);
        return left.trim() === '' ? true : undefined;
      },
      wait,
    );
    await k.helm(['uninstall', ns, '-n', ns, '--wait', '--timeout', '180s']);
    await k.kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=240s']);
    const gone = async (args: string[]) => {
      const out = await k.kubectl(['get', ...args, '--ignore-not-found', '-o', 'name']);
      expect(out.trim(), `left behind: ${out}`).toBe('');
    };
    await gone(['namespace', ns]);
    await gone(['clusterrole', operatorName]);
    await gone(['clusterrolebinding', operatorName]);
    expect(await k.helm(['list', '-A', '-q', '--filter', `^${ns}$`])).toBe('');
    // Volumes: a dynamically provisioned one (kind's `standard`, reclaim Delete) goes with its claim; one of
    // the local cluster's pool (reclaim Retain) stays Released until cluster-up recycles it. None stays Bound.
    await waitFor(
      'no PersistentVolume left bound to the namespace, none of reclaim policy Delete left at all',
      async () => {
        const pvs = await k.getJson<
          KubeList<
            KubeObject & {
              spec: { claimRef?: { namespace?: string }; persistentVolumeReclaimPolicy?: string };
              status: { phase?: string };
            }
          >
        >(['pv']);
        const ours = pvs.items.filter((pv) => pv.spec.claimRef?.namespace === ns);
        const left = ours.filter(
          (pv) => pv.status.phase !== 'Released' || pv.spec.persistentVolumeReclaimPolicy !== 'Retain',
        );
        return left.length === 0 ? true : undefined;
      },
      { timeoutMs: 120_000 },
    );
  }, 900_000);
}

/** Printer columns of `kubectl get <resource>`: its header split into column names, and its rows. */
export async function printerColumns(j: Journey, resource: string, wide = false) {
  const table = await j.k.kubectl(['-n', j.ns, 'get', resource, ...(wide ? ['-o', 'wide'] : [])]);
  const [header, ...rows] = table.trim().split('\n');
  return { columns: header?.split(/\s{2,}/) ?? [], rows, table };
}

/** The namespace's Events about objects of `kind`, each checked to read well: a reason word, a type, a message. */
export async function eventsAbout(j: Journey, kind: string): Promise<string[]> {
  interface Event {
    type: string;
    reason: string;
    message?: string;
    involvedObject: { kind: string };
  }
  const events = (await j.k.getJson<KubeList<Event>>(['-n', j.ns, 'events'])).items.filter(
    (e) => e.involvedObject.kind === kind,
  );
  for (const e of events) {
    expect(e.reason).toMatch(/^[A-Z][A-Za-z]+$/);
    expect(['Normal', 'Warning']).toContain(e.type);
    expect((e.message ?? '').length).toBeGreaterThan(0);
  }
  return events.map((e) => `${e.type}/${e.reason}`);
}
