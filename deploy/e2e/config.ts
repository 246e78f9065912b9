// Settings of the end-to-end suite, from the environment (make e2e-local / make e2e-kind set them).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The resources of every workload the suite creates (validators, the translation API, PostgreSQL). The journeys run
 * side by side on one node of 2 cores, and kind's control plane requests about one of them: at the products' default
 * requests (100m) a rollout's surge pod or a scaled-up validator stayed Pending ("Insufficient cpu") until another
 * journey's pods went. The suite tests what the products do, not how much CPU a node reserves for them.
 */
export const SUITE_RESOURCES = { requests: { cpu: '20m', memory: '96Mi' }, limits: { memory: '512Mi' } } as const;

export interface E2eConfig {
  /** Kubeconfig of the cluster under test (required). */
  kubeconfig: string;
  kubectl: string;
  helm: string;
  operatorImage: { repository: string; tag: string };
  translationImage: string;
  ledgerImage: string;
  /**
   * This host's IPv4 address as the cluster's pods reach it (E2E_HOST_ADDRESS; the local cluster: its node's address,
   * kind: its Docker network's gateway): the watch step's brokers listen there, outside the cluster.
   */
  hostAddress: string;
  postgresImage: string;
  /** Image pull policy of every pod the suite creates: the images are preloaded on both clusters. */
  pullPolicy: 'IfNotPresent' | 'Never';
  /** Prefix of the suite's namespace and Helm release; a unique suffix is added per run. */
  namePrefix: string;
  /** Upper bound of each wait, in milliseconds. */
  waitMs: number;
  /** The test LedgerCluster's consensus.emptyBlockIntervalMs: an idle chain's block every this many ms. */
  emptyBlockIntervalMs: number;
  /**
   * host:port outside the cluster that no pod may reach (the local cluster's egress firewall), the image of the
   * probing pod and the firewall's chain on this host; unset: the egress step is skipped (kind lets pods out).
   */
  egressProbe?: { host: string; port: number; image: string; chain: string };
  /**
   * The cluster's ingress controller as the host reaches it (E2E_INGRESS, host:port of its HTTP entry point) and the
   * IngressClass the suite's Ingresses name (E2E_INGRESS_CLASS): requests to an Ingress host go there (kube.ts
   * viaIngress).
   */
  ingress: { address: { host: string; port: number }; className: string };
}

/** One clear line naming the variable, as the services do for their configuration. */
export class E2eConfigError extends Error {}

function splitImage(ref: string, variable: string): { repository: string; tag: string } {
  const at = ref.lastIndexOf(':');
  if (at <= ref.lastIndexOf('/') || at === ref.length - 1) {
    throw new E2eConfigError(`${variable}: expected <repository>:<tag>, got ${JSON.stringify(ref)}`);
  }
  return { repository: ref.slice(0, at), tag: ref.slice(at + 1) };
}

/** The kubectl/helm of tools/kube/build.sh (same versions as the rest of the repo) when built, else PATH. */
function kubeBin(name: string, env: NodeJS.ProcessEnv): string {
  const dir = env.SCRIPTORIUM_KUBE_BIN;
  if (dir && existsSync(join(dir, name))) return join(dir, name);
  return name;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): E2eConfig {
  const kubeconfig = env.KUBECONFIG;
  if (!kubeconfig) throw new E2eConfigError('KUBECONFIG: required (the kubeconfig of the cluster under test)');
  if (!existsSync(kubeconfig)) throw new E2eConfigError(`KUBECONFIG: no file at ${kubeconfig}`);
  const tag = env.E2E_IMAGE_TAG ?? 'dev';
  if (!/^[\w][\w.-]{0,127}$/.test(tag)) throw new E2eConfigError(`E2E_IMAGE_TAG: not a valid image tag: ${tag}`);
  const pullPolicy = env.E2E_PULL_POLICY ?? 'IfNotPresent';
  if (pullPolicy !== 'IfNotPresent' && pullPolicy !== 'Never') {
    throw new E2eConfigError(`E2E_PULL_POLICY: expected IfNotPresent or Never, got ${pullPolicy}`);
  }
  const waitSeconds = Number(env.E2E_WAIT_SECONDS ?? '300');
  if (!Number.isInteger(waitSeconds) || waitSeconds < 10 || waitSeconds > 3600) {
    throw new E2eConfigError('E2E_WAIT_SECONDS: expected a whole number of seconds between 10 and 3600');
  }
  const emptyBlockIntervalMs = Number(env.E2E_EMPTY_BLOCK_INTERVAL_MS ?? '2000');
  if (!Number.isInteger(emptyBlockIntervalMs) || emptyBlockIntervalMs < 0 || emptyBlockIntervalMs > 86_400_000) {
    throw new E2eConfigError('E2E_EMPTY_BLOCK_INTERVAL_MS: expected a whole number of milliseconds (0 = never)');
  }
  const namePrefix = env.E2E_NAME_PREFIX ?? 'e2e';
  if (!/^[a-z][a-z0-9-]{0,20}$/.test(namePrefix)) {
    throw new E2eConfigError('E2E_NAME_PREFIX: lower-case letters, digits and dashes, at most 21 characters');
  }
  let egressProbe: E2eConfig['egressProbe'];
  if (env.E2E_EGRESS_PROBE) {
    const match = /^([\d.]+):(\d{1,5})$/.exec(env.E2E_EGRESS_PROBE);
    if (!match?.[1] || !match[2]) throw new E2eConfigError('E2E_EGRESS_PROBE: expected <IPv4 address>:<port>');
    egressProbe = {
      host: match[1],
      port: Number(match[2]),
      image: env.E2E_PROBE_IMAGE ?? 'docker.io/library/node:24-bookworm-slim',
      // The iptables chain (mangle table) whose DROP counters must rise: the suite then runs on the cluster's host.
      chain: env.E2E_EGRESS_CHAIN ?? 'SCRIPTORIUM-EGRESS',
    };
  }
  if (!env.E2E_INGRESS) {
    throw new E2eConfigError(
      'E2E_INGRESS: required (host:port of the ingress controller, e.g. 127.0.0.1:80; make e2e-local and make e2e-kind set it)',
    );
  }
  const ingressMatch = /^([\w.-]+):(\d{1,5})$/.exec(env.E2E_INGRESS);
  const ingressPort = Number(ingressMatch?.[2]);
  if (!ingressMatch?.[1] || !(ingressPort > 0 && ingressPort < 65536)) {
    throw new E2eConfigError(`E2E_INGRESS: expected <host>:<port>, got ${JSON.stringify(env.E2E_INGRESS)}`);
  }
  const hostAddress = env.E2E_HOST_ADDRESS ?? '';
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(hostAddress)) {
    throw new E2eConfigError(
      `E2E_HOST_ADDRESS: expected this host's IPv4 address as the cluster's pods reach it, got ${JSON.stringify(hostAddress)} (make e2e-local and make e2e-kind set it)`,
    );
  }
  const ingressClass = env.E2E_INGRESS_CLASS ?? 'traefik';
  if (!/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/.test(ingressClass)) {
    throw new E2eConfigError(`E2E_INGRESS_CLASS: not an IngressClass name: ${JSON.stringify(ingressClass)}`);
  }
  return {
    kubeconfig,
    ingress: { address: { host: ingressMatch[1], port: ingressPort }, className: ingressClass },
    ...(egressProbe ? { egressProbe } : {}),
    kubectl: env.E2E_KUBECTL ?? kubeBin('kubectl', env),
    helm: env.E2E_HELM ?? kubeBin('helm', env),
    operatorImage: splitImage(env.E2E_OPERATOR_IMAGE ?? `scriptorium/operator:${tag}`, 'E2E_OPERATOR_IMAGE'),
    translationImage: env.E2E_TRANSLATION_IMAGE ?? `scriptorium/translation:${tag}`,
    ledgerImage: env.E2E_LEDGER_IMAGE ?? `scriptorium/ledger-node:${tag}`,
    hostAddress,
    postgresImage: env.E2E_POSTGRES_IMAGE ?? 'docker.io/library/postgres:17-alpine',
    pullPolicy,
    namePrefix,
    waitMs: waitSeconds * 1000,
    emptyBlockIntervalMs,
  };
}
