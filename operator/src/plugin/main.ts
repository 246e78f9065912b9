#!/usr/bin/env node
// kubectl-scriptorium: the kubectl plugin for Scriptorium's custom resources (`kubectl scriptorium …` once this
// file, or the wrapper `make kubectl-plugin` installs, is on PATH as `kubectl-scriptorium`).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { LedgerCluster } from '../api/index.ts';
import { KubeClient } from '../kube/client.ts';
import { RESOURCES, resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { keysCreateArgs } from './keys.ts';
import { PluginError, retire } from './retire.ts';
import { renderStatus } from './status.ts';
import { httpGetJson, verifyRecordProof } from './verify-proof.ts';

const usage = `usage: kubectl scriptorium <command> [-n NAMESPACE] [--context NAME] [--kubeconfig FILE]
  status CLUSTER                        a LedgerCluster on one screen: validators, roles, heights, quorum,
                                        round, pending change, conditions, recent warnings
  retire CLUSTER VALIDATOR              add VALIDATOR to spec.retire (guarded by resourceVersion) and follow the
                                        operator until it has left the chain [--timeout 10m] [--no-wait] [--force]
  verify-proof URL HEIGHT INDEX         fetch record INDEX of block HEIGHT's proof and the chain up to it from a
                                        node, and verify proof, block hash and every finality certificate locally
                                        [--ca FILE] (exit 0 valid, 1 invalid)
  keys create TRANSLATIONSERVICE [ARGS] an API key from the translation image's CLI in one of the service's pods
                                        (ARGS go to its 'keys create', e.g. --user someone@example.com)`;

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
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new PluginError(`${(err as Error).message}\n${usage}`, 2);
  }
}

async function main(argv: string[]): Promise<number> {
  const { kube: kubeOptions, rest } = splitKubeOptions(argv);
  // `keys create SERVICE …`: everything after the service goes to the image's CLI as it is.
  const keysCli = rest[0] === 'keys' ? rest.slice(3) : [];
  const { values, positionals } = parseCommand(rest[0] === 'keys' ? rest.slice(0, 3) : rest);
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
      const ca = str(values.ca);
      const http = await httpGetJson(url, { ca: ca ? readFileSync(ca, 'utf8') : undefined });
      try {
        const verdict = await verifyRecordProof(http.get, height, index);
        for (const line of verdict.lines) print(line);
        return verdict.valid ? 0 : 1;
      } finally {
        await http.close();
      }
    }
    case 'keys': {
      const [sub, service] = args;
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

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`kubectl scriptorium: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof PluginError ? err.exitCode : 1);
    },
  );
}
