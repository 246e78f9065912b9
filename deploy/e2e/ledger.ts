// What the end-to-end files share about a LedgerCluster's validators: their pods, whether one is Ready, and a GET
// of one validator through a port-forward (HTTPS verified with the CA its pod mounts, when the cluster serves TLS);
// and the check that every node holds the same block at the highest height they all have.
import { X509Certificate } from 'node:crypto';
import { expect } from 'vitest';
import type { E2eConfig } from './config.ts';
import { http, type Kube, type KubeList, type KubeObject, type PortForward, portForward } from './kube.ts';

export interface Pod extends KubeObject {
  spec: {
    containers: { name: string; env?: { name: string; value?: string }[]; ports?: { containerPort: number }[] }[];
  };
  status: {
    phase?: string;
    containerStatuses?: { ready: boolean; restartCount: number }[];
  };
}

export const podReady = (pod: Pod) =>
  pod.status.phase === 'Running' &&
  !pod.metadata.deletionTimestamp &&
  (pod.status.containerStatuses ?? []).length > 0 &&
  (pod.status.containerStatuses ?? []).every((c) => c.ready);

export interface ChainStatus {
  node_id: string;
  height: number;
  latest_hash: string;
  validators: number;
  quorum: number;
}

/** How long a port-forward to a validator stays open without a read. */
const FORWARD_IDLE_MS = 5000;

/** A file's access to validator pods; `namespace` is where it looks unless told otherwise. */
export function ledgerPods(k: Kube, config: E2eConfig, namespace: string) {
  // A pod's CA and server name, read once per pod (by uid): a pod's files do not change while it lives (a new key or
  // CA comes with a new pod), and the waits read /chain every 2 s, each read two `kubectl exec` more otherwise.
  const tlsOfPod = new Map<string, Promise<{ ca: string; servername: string }>>();
  // A port-forward per pod and port, kept open between reads while they come (a wait reads every 2–3 s) and closed
  // after FORWARD_IDLE_MS without one, when a read fails, or when the file's process ends: each new one is a kubectl
  // process and a stream the API server and the kubelet set up.
  const forwards = new Map<string, { forward: Promise<PortForward>; open?: PortForward; idle?: NodeJS.Timeout }>();
  const dropForward = (key: string) => {
    const entry = forwards.get(key);
    forwards.delete(key);
    if (entry?.idle) clearTimeout(entry.idle);
    entry?.forward.then((f) => f.close()).catch(() => {});
  };
  // At exit only synchronous work runs: the forwards already open are closed directly.
  process.once('exit', () => {
    for (const entry of forwards.values()) entry.open?.close();
  });
  /** The validator pods of one LedgerCluster, by name. */
  const validatorPods = async (ns = namespace, cluster = 'ledger') =>
    (
      await k.getJson<KubeList<Pod>>([
        '-n',
        ns,
        'pods',
        '-l',
        `app.kubernetes.io/name=ledger-node,app.kubernetes.io/component=validator,scriptorium.dev/ledger-cluster=${cluster}`,
      ])
    ).items.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));

  /** Reads a validator pod through its port-forward (HTTPS verified with the cluster CA when TLS is on) in `use`. */
  const withLedger = async <T>(pod: Pod, use: (get: <B>(path: string) => Promise<B>) => Promise<T>): Promise<T> => {
    const container = pod.spec.containers[0];
    const env = new Map((container?.env ?? []).map((e) => [e.name, e.value ?? '']));
    const port = Number(env.get('NODE_CONSENSUS__BIND_PORT') || container?.ports?.[0]?.containerPort || 8000);
    let tls: { ca: string; servername: string } | undefined;
    const ns = pod.metadata.namespace ?? namespace;
    const podKey = pod.metadata.uid ?? `${ns}/${pod.metadata.name}`;
    if (env.get('NODE_TLS__ENABLED') === 'true') {
      let read = tlsOfPod.get(podKey);
      if (!read) {
        const cat = (file: string) => k.kubectl(['-n', ns, 'exec', pod.metadata.name, '--', 'cat', file]);
        read = (async () => {
          const ca = await cat(env.get('NODE_TLS__CA_FILE') ?? '');
          const cert = new X509Certificate(await cat(env.get('NODE_TLS__CERT_FILE') ?? ''));
          const servername = /DNS:([^,\s]+)/.exec(cert.subjectAltName ?? '')?.[1];
          if (!servername) throw new Error(`${pod.metadata.name}: its certificate names no DNS SAN`);
          return { ca, servername };
        })();
        tlsOfPod.set(podKey, read);
        // A failed read (the pod not yet running its container) is tried again at the next call.
        read.catch(() => tlsOfPod.delete(podKey));
      }
      tls = await read;
    }
    const key = `${podKey}:${port}`;
    let entry = forwards.get(key);
    if (entry && !(await entry.forward.then((f) => f.alive()).catch(() => false))) {
      dropForward(key);
      entry = undefined;
    }
    if (!entry) {
      const opening: { forward: Promise<PortForward>; open?: PortForward } = {
        forward: portForward(config, ns, `pod/${pod.metadata.name}`, port),
      };
      opening.forward.then(
        (f) => {
          opening.open = f;
        },
        () => {},
      );
      entry = opening;
      forwards.set(key, entry);
    }
    if (entry.idle) clearTimeout(entry.idle);
    const used = entry;
    try {
      const forward = await used.forward;
      const result = await use(async <B>(path: string) => {
        const answer = await http(forward.port, path, tls ? { tls } : {});
        if (answer.status !== 200) throw new Error(`${pod.metadata.name} GET ${path}: ${answer.status} ${answer.body}`);
        return answer.json<B>();
      });
      used.idle = setTimeout(() => dropForward(key), FORWARD_IDLE_MS).unref();
      return result;
    } catch (err) {
      // The next read opens a new forward (this one may point at a pod that went).
      if (forwards.get(key) === used) dropForward(key);
      throw err;
    }
  };

  /** GET a path of one validator pod through a port-forward. */
  const ledgerGet = <T>(pod: Pod, path: string): Promise<T> => withLedger(pod, (get) => get<T>(path));
  const chains = async (pods: Pod[]) => Promise.all(pods.map((p) => ledgerGet<ChainStatus>(p, '/chain')));

  /** Every node holds the same block at the highest height they all have. */
  const expectAgreement = async (pods: Pod[]) => {
    const status = await chains(pods);
    const common = Math.min(...status.map((s) => s.height));
    expect(common).toBeGreaterThan(0);
    const headers = await Promise.all(
      pods.map((p) => ledgerGet<{ header: unknown }>(p, `/blocks/${common}`).then((b) => JSON.stringify(b.header))),
    );
    expect(new Set(headers).size, `headers at height ${common}: ${headers.join(' | ')}`).toBe(1);
    return { status, common };
  };

  return { validatorPods, withLedger, ledgerGet, chains, expectAgreement };
}
