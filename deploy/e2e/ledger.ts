// What the end-to-end files share about a LedgerCluster's validators: their pods, whether one is Ready, and a GET
// of one validator through a port-forward (HTTPS verified with the CA its pod mounts, when the cluster serves TLS);
// and the check that every node holds the same block at the highest height they all have.
import { X509Certificate } from 'node:crypto';
import { expect } from 'vitest';
import type { E2eConfig } from './config.ts';
import { http, type Kube, type KubeList, type KubeObject, portForward } from './kube.ts';

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

/** A file's access to validator pods; `namespace` is where it looks unless told otherwise. */
export function ledgerPods(k: Kube, config: E2eConfig, namespace: string) {
  // A pod's CA and server name, read once per pod (by uid): a pod's files do not change while it lives (a new key or
  // CA comes with a new pod), and the waits read /chain every 2 s, each read two `kubectl exec` more otherwise.
  const tlsOfPod = new Map<string, Promise<{ ca: string; servername: string }>>();
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

  /** Opens one port-forward to a validator pod (HTTPS verified with the cluster CA when TLS is on) for `use`. */
  const withLedger = async <T>(pod: Pod, use: (get: <B>(path: string) => Promise<B>) => Promise<T>): Promise<T> => {
    const container = pod.spec.containers[0];
    const env = new Map((container?.env ?? []).map((e) => [e.name, e.value ?? '']));
    const port = Number(env.get('NODE_CONSENSUS__BIND_PORT') || container?.ports?.[0]?.containerPort || 8000);
    let tls: { ca: string; servername: string } | undefined;
    const ns = pod.metadata.namespace ?? namespace;
    if (env.get('NODE_TLS__ENABLED') === 'true') {
      const key = pod.metadata.uid ?? `${ns}/${pod.metadata.name}`;
      let read = tlsOfPod.get(key);
      if (!read) {
        const cat = (file: string) => k.kubectl(['-n', ns, 'exec', pod.metadata.name, '--', 'cat', file]);
        read = (async () => {
          const ca = await cat(env.get('NODE_TLS__CA_FILE') ?? '');
          const cert = new X509Certificate(await cat(env.get('NODE_TLS__CERT_FILE') ?? ''));
          const servername = /DNS:([^,\s]+)/.exec(cert.subjectAltName ?? '')?.[1];
          if (!servername) throw new Error(`${pod.metadata.name}: its certificate names no DNS SAN`);
          return { ca, servername };
        })();
        tlsOfPod.set(key, read);
        // A failed read (the pod not yet running its container) is tried again at the next call.
        read.catch(() => tlsOfPod.delete(key));
      }
      tls = await read;
    }
    const forward = await portForward(config, ns, `pod/${pod.metadata.name}`, port);
    try {
      return await use(async <B>(path: string) => {
        const answer = await http(forward.port, path, tls ? { tls } : {});
        if (answer.status !== 200) throw new Error(`${pod.metadata.name} GET ${path}: ${answer.status} ${answer.body}`);
        return answer.json<B>();
      });
    } finally {
      forward.close();
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
