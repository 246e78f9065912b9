// kubectl-scriptorium: the kubectl plugin for Scriptorium's custom resources (`kubectl scriptorium …` once its entry,
// main.ts, or the wrapper `make kubectl-plugin` installs, is on PATH as `kubectl-scriptorium`).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { LedgerCluster } from '../api/index.ts';
import { KubeClient } from '../kube/client.ts';
import { RESOURCES, resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { LedgerNodeClient } from '../ledger/index.ts';
import { clusterNames, GENESIS_FILE } from '../specs/ledger-cluster/index.ts';
import { keysCreateArgs } from './keys.ts';
import { PluginError, retire } from './retire.ts';
import { exportIdentity, rotateKey } from './rotate-key.ts';
import { renderStatus } from './status.ts';
import { pinGenesis, verifyRecordEvidence, witnessRequirement } from './verify-proof.ts';

const usage = `usage: kubectl scriptorium <command> [-n NAMESPACE] [--context NAME] [--kubeconfig FILE]
  status CLUSTER                        a LedgerCluster on one screen: validators, roles, heights, quorum,
                                        round, pending change, conditions, recent warnings
  retire CLUSTER VALIDATOR              add VALIDATOR to spec.retire (guarded by resourceVersion) and follow the
                                        operator until it has left the chain [--timeout 10m] [--no-wait] [--force]
  verify-proof URL HEIGHT INDEX         fetch record INDEX of block HEIGHT's light evidence (GET /evidence) from a
                                        node and verify it locally against the genesis pinned from the
                                        LedgerCluster's genesis ConfigMap ([--cluster NAME] when the namespace holds
                                        several) or from --genesis FILE [--ca FILE] (exit 0 valid, 1 invalid); with
                                        the LedgerCluster's witnesses (or --witness NAME=KEY ... [--witness-threshold
                                        K]) the evidence must carry a checkpoint they cosigned
  keys create TRANSLATIONSERVICE [ARGS] an API key from the translation image's CLI in one of the service's pods
                                        (ARGS go to its 'keys create', e.g. --user someone@example.com)
  rotate-key CLUSTER VALIDATOR          a new key for VALIDATOR without downtime (annotation scriptorium.dev/rotate-key):
                                        the operator restarts the validator with it, ADDs it, REMOVEs the old one;
                                        follows each step [--timeout 10m] [--no-wait]
  keys export CLUSTER                   the chain's identity (genesis and the validators' keys) as a Secret manifest,
                                        for spec.bootstrap.fromBackup.identitySecretRef (keep it apart from backups)`;

function duration(text: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(text);
  if (!m) throw new PluginError(`bad duration ${text} (e.g. 90s, 10m)`, 2);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * unit;
}

async function kubeClient(kubeconfig: string | undefined, context: string | undefined) {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  if (context) kc.setCurrentContext(context);
  return { client: new KubeClient(kc), defaultNamespace: kc.getContextObject(kc.getCurrentContext())?.namespace };
}

/** Takes the kube options (-n, --namespace, --context, --kubeconfig) out of argv, wherever they stand (pure). */
export function splitKubeOptions(argv: string[]): { kube: Record<string, string>; rest: string[] } {
  const names: Record<string, string> = {
    '-n': 'namespace',
    '--namespace': 'namespace',
    '--context': 'context',
    '--kubeconfig': 'kubeconfig',
  };
  const kube: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const eq = arg.indexOf('=');
    const key = eq > 0 ? arg.slice(0, eq) : arg;
    const name = names[key];
    if (!name) rest.push(arg);
    else if (eq > 0) kube[name] = arg.slice(eq + 1);
    else if (i + 1 < argv.length) kube[name] = argv[++i] as string;
    else throw new PluginError(`${arg} needs a value`, 2);
  }
  return { kube, rest };
}

function parseCommand(args: string[]) {
  try {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        timeout: { type: 'string' },
        'no-wait': { type: 'boolean' },
        force: { type: 'boolean' },
        ca: { type: 'string' },
        genesis: { type: 'string' },
        cluster: { type: 'string' },
        witness: { type: 'string', multiple: true },
        'witness-threshold': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new PluginError(`${(err as Error).message}\n${usage}`, 2);
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new PluginError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 2);
  }
}

/**
 * The genesis a LedgerCluster's validators were started from: its genesis ConfigMap. The cluster is `name`, or the
 * namespace's only LedgerCluster.
 */
async function clusterGenesis(kube: { client: KubeClient; namespace: string }, name: string | undefined) {
  const { client, namespace } = kube;
  try {
    let cluster = name;
    if (cluster === undefined) {
      const list = await client.request<{ items: KubeObject[] }>(
        'GET',
        resourcePath(RESOURCES.LedgerCluster, namespace),
      );
      const names = list.items.map((lc) => lc.metadata.name);
      if (names.length !== 1)
        throw new PluginError(
          names.length === 0
            ? `no LedgerCluster in namespace ${namespace}: give --genesis FILE (or -n NAMESPACE)`
            : `namespace ${namespace} holds ${names.length} LedgerClusters (${names.join(', ')}): name one with --cluster`,
          2,
        );
      cluster = names[0] as string;
    }
    const cmName = clusterNames({ metadata: { name: cluster } } as LedgerCluster).genesisConfigMap;
    const cm = await client
      .request<KubeObject & { data?: Record<string, string> }>(
        'GET',
        resourcePath(RESOURCES.ConfigMap, namespace, cmName),
      )
      .catch((err) => {
        if ((err as { status?: number }).status === 404)
          throw new PluginError(
            `ConfigMap ${namespace}/${cmName} (the genesis of LedgerCluster ${cluster}) not found`,
            2,
          );
        throw err;
      });
    const text = cm.data?.[GENESIS_FILE];
    if (text === undefined) throw new PluginError(`ConfigMap ${namespace}/${cmName} holds no ${GENESIS_FILE}`, 2);
    const lc = await client
      .request<LedgerCluster>('GET', resourcePath(RESOURCES.LedgerCluster, namespace, cluster))
      .catch(() => undefined);
    return { genesis: pinGenesis(text, `ConfigMap ${namespace}/${cmName}`), spec: lc?.spec };
  } finally {
    client.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const { kube: kubeOptions, rest } = splitKubeOptions(argv);
  // `keys create SERVICE …`: everything after the service goes to the image's CLI as it is.
  const keysCreate = rest[0] === 'keys' && rest[1] === 'create';
  const keysCli = keysCreate ? rest.slice(3) : [];
  const { values, positionals } = parseCommand(keysCreate ? rest.slice(0, 3) : rest);
  const [command, ...args] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${usage}\n`);
    return command || values.help ? 0 : 2;
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const kube = async () => {
    const { client, defaultNamespace } = await kubeClient(kubeOptions.kubeconfig, kubeOptions.context);
    return { client, namespace: kubeOptions.namespace ?? defaultNamespace ?? 'default' };
  };

  switch (command) {
    case 'status': {
      const [name] = args;
      if (!name || args.length !== 1) throw new PluginError('usage: kubectl scriptorium status CLUSTER', 2);
      const { client, namespace } = await kube();
      try {
        const lc = await client
          .request<LedgerCluster>('GET', resourcePath(RESOURCES.LedgerCluster, namespace, name))
          .catch((err) => {
            if ((err as { status?: number }).status === 404)
              throw new PluginError(`LedgerCluster ${namespace}/${name} not found`, 2);
            throw err;
          });
        const pods = await client.request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.Pod, namespace), {
          query: { labelSelector: `scriptorium.dev/ledger-cluster=${name}` },
        });
        const events = await client
          .request<{ items: KubeObject[] }>('GET', resourcePath(RESOURCES.Event, namespace), {
            query: { fieldSelector: `regarding.kind=LedgerCluster,regarding.name=${name}` },
          })
          .catch(() => ({ items: [] }));
        process.stdout.write(renderStatus(lc, pods.items, events.items, new Date()));
        return 0;
      } finally {
        client.close();
      }
    }
    case 'retire': {
      const [name, validator] = args;
      if (!name || !validator || args.length !== 2)
        throw new PluginError('usage: kubectl scriptorium retire CLUSTER VALIDATOR', 2);
      const { client, namespace } = await kube();
      try {
        await retire(client, namespace, name, validator, {
          timeoutMs: duration(str(values.timeout) ?? '10m'),
          wait: values['no-wait'] !== true,
          force: values.force === true,
          print,
        });
        return 0;
      } finally {
        client.close();
      }
    }
    case 'verify-proof': {
      const [url, h, i] = args;
      const height = Number(h);
      const index = Number(i);
      if (!url || args.length !== 3 || !Number.isInteger(height) || height < 0 || !Number.isInteger(index) || index < 0)
        throw new PluginError('usage: kubectl scriptorium verify-proof URL HEIGHT INDEX', 2);
      const genesisFile = str(values.genesis);
      const pinned = genesisFile
        ? { genesis: pinGenesis(readText(genesisFile), genesisFile), spec: undefined }
        : await clusterGenesis(await kube(), str(values.cluster));
      const { genesis } = pinned;
      const witnesses = witnessRequirement(
        pinned.spec,
        (values.witness ?? []) as string[],
        str(values['witness-threshold']),
      );
      const ca = str(values.ca);
      const node = new LedgerNodeClient({ timeoutMs: 30_000, ...(ca ? { caPem: readText(ca) } : {}) });
      try {
        const verdict = await verifyRecordEvidence(
          { evidence: (h, i) => node.evidence(url, h, i), block: (h) => node.block(url, h) },
          genesis,
          height,
          index,
          witnesses,
        );
        for (const line of verdict.lines) print(line);
        return verdict.valid ? 0 : 1;
      } catch (err) {
        throw new PluginError((err as Error).message, 2);
      } finally {
        await node.close();
      }
    }
    case 'rotate-key': {
      const [name, validator] = args;
      if (!name || !validator || args.length !== 2)
        throw new PluginError('usage: kubectl scriptorium rotate-key CLUSTER VALIDATOR', 2);
      const { client, namespace } = await kube();
      try {
        await rotateKey(client, namespace, name, validator, {
          timeoutMs: duration(str(values.timeout) ?? '10m'),
          wait: values['no-wait'] !== true,
          print,
        });
        return 0;
      } finally {
        client.close();
      }
    }
    case 'keys': {
      const [sub, service] = args;
      if (sub === 'export' && service) {
        const { client, namespace } = await kube();
        try {
          print(JSON.stringify(await exportIdentity(client, namespace, service), null, 2));
          return 0;
        } finally {
          client.close();
        }
      }
      const cliArgs = keysCli;
      if (sub !== 'create' || !service)
        throw new PluginError('usage: kubectl scriptorium keys create TRANSLATIONSERVICE [ARGS]', 2);
      const { client, namespace } = await kube();
      try {
        await client.request('GET', resourcePath(RESOURCES.TranslationService, namespace, service)).catch((err) => {
          if ((err as { status?: number }).status === 404)
            throw new PluginError(`TranslationService ${namespace}/${service} not found`, 2);
          throw err;
        });
      } finally {
        client.close();
      }
      const kubectlArgs = keysCreateArgs(namespace, service, cliArgs, {
        kubeconfig: kubeOptions.kubeconfig,
        context: kubeOptions.context,
      });
      return await new Promise<number>((resolve) => {
        const child = spawn(process.env.KUBECTL ?? 'kubectl', kubectlArgs, { stdio: 'inherit' });
        child.on('error', (err) => {
          process.stderr.write(`kubectl scriptorium: cannot run kubectl: ${err.message}\n`);
          resolve(2);
        });
        child.on('exit', (code) => resolve(code ?? 1));
      });
    }
    default:
      throw new PluginError(`unknown command ${command}\n${usage}`, 2);
  }
}

/** Runs the plugin on `argv` and exits with its code (main.ts, the command's entry). */
export function runPlugin(argv: string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`kubectl scriptorium: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof PluginError ? err.exitCode : 1);
    },
  );
}
