import { formatPeerSpec, parseHostPort } from '@scriptorium/ledger-protocol';
import type { LedgerCluster, LedgerClusterSpec } from '../../api/index.ts';
import type { KubeObject } from '../../kube/types.ts';
import { childMeta, clusterNames, clusterPodSelector, validatorNames, validatorPodSelector } from './meta.ts';

/** The node's one port (API and peer traffic), `NODE_CONSENSUS__BIND_PORT`. */
export const NODE_PORT = 8000;
export const PORT_NAME = 'api';
/** Key of the peers ConfigMap that `NODE_PEERS` is read from. */
export const PEERS_KEY = 'peers';

/** The host peers and the operator use to reach a validator: its Service's DNS name. */
export function validatorHost(lc: LedgerCluster, validator: string): string {
  return `${validatorNames(validator).service}.${lc.metadata.namespace ?? 'default'}.svc`;
}

/** `host:port` a validator advertises (`NODE_CONSENSUS__ADVERTISE`). */
export function validatorAddress(lc: LedgerCluster, validator: string): string {
  return `${validatorHost(lc, validator)}:${NODE_PORT}`;
}

/** Base URL of a validator's API inside the cluster (https when TLS is on). */
export function validatorUrl(lc: LedgerCluster, spec: LedgerClusterSpec, validator: string): string {
  return `${spec.tls.mode === 'disabled' ? 'http' : 'https'}://${validatorAddress(lc, validator)}`;
}

/**
 * One Service per validator: a stable peer DNS name `<validator>.<ns>.svc` and a stable virtual IP across pod
 * restarts. `publishNotReadyAddresses`: consensus and catch-up traffic must reach a node before it is ready
 * (readiness means "caught up").
 */
export function validatorService(lc: LedgerCluster, validator: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(lc, validatorNames(validator).service, 'validator', validator),
    spec: {
      type: 'ClusterIP',
      publishNotReadyAddresses: true,
      selector: validatorPodSelector(lc, validator),
      ports: [{ name: PORT_NAME, port: NODE_PORT, targetPort: PORT_NAME, protocol: 'TCP' }],
    },
  };
}

/** The client Service `<cluster>`: the read API of every ready validator. */
export function clientService(lc: LedgerCluster): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(lc, clusterNames(lc).clientService, 'client'),
    spec: {
      type: 'ClusterIP',
      selector: clusterPodSelector(lc),
      ports: [{ name: PORT_NAME, port: NODE_PORT, targetPort: PORT_NAME, protocol: 'TCP' }],
    },
  };
}

/**
 * The paths the Ingress routes to the client Service: the open reads a browser or an API client needs and the /ui
 * console (its files and read-only peer list are under /ui). Everything else — POST /consensus, /mempool,
 * /membership, /block, /peers, /admin/*, and /metrics, /ready — is not routed. Kubernetes matches `Prefix` by whole
 * path segments, so `/blocks` never matches `/block`.
 */
export const INGRESS_PATHS: ReadonlyArray<{ path: string; pathType: 'Exact' | 'Prefix' }> = [
  { path: '/health', pathType: 'Exact' },
  { path: '/chain', pathType: 'Exact' },
  { path: '/blocks', pathType: 'Prefix' },
  { path: '/proof', pathType: 'Prefix' },
  { path: '/evidence', pathType: 'Prefix' },
  // The chain as a transparency log: its checkpoint, the proofs against it, witnessing (not the peer POSTs under it).
  { path: '/checkpoint', pathType: 'Exact' },
  { path: '/checkpoint/proof', pathType: 'Exact' },
  { path: '/checkpoint/witnesses', pathType: 'Exact' },
  { path: '/ui', pathType: 'Prefix' },
];

/** The Ingress to the client Service (`spec.ingress`), or null (which deletes one the operator made before). */
export function clientIngress(lc: LedgerCluster, spec: LedgerClusterSpec): KubeObject | null {
  if (!spec.ingress) return null;
  const { host, className, tlsSecretName, annotations } = spec.ingress;
  const meta = childMeta(lc, clusterNames(lc).ingress, 'ingress');
  const backend = { service: { name: clusterNames(lc).clientService, port: { name: PORT_NAME } } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: annotations ? { ...meta, annotations } : meta,
    spec: {
      ...(className ? { ingressClassName: className } : {}),
      ...(tlsSecretName ? { tls: [{ hosts: [host], secretName: tlsSecretName }] } : {}),
      rules: [{ host, http: { paths: INGRESS_PATHS.map((p) => ({ ...p, backend })) } }],
    },
  };
}

/**
 * The validators' PodDisruptionBudget: voluntary disruptions (drains) take at most f = floor((n − 1) / 3) validator
 * pods at once (at least 1, so a cluster of fewer than 4 can still be drained), the faults the chain tolerates.
 */
export function podDisruptionBudget(lc: LedgerCluster, validators: number): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMeta(lc, clusterNames(lc).pdb, 'validator'),
    spec: {
      maxUnavailable: Math.max(1, Math.floor((validators - 1) / 3)),
      selector: { matchLabels: clusterPodSelector(lc) },
    },
  };
}

/** A peer spec `<node_id>@<host>:<port>|<public_key>` for an address `host:port`. */
export function peerSpec(nodeId: string, address: string, publicKey: string): string {
  const hostPort = parseHostPort(address);
  if (typeof hostPort === 'string') throw new RangeError(hostPort);
  return formatPeerSpec({ nodeId, ...hostPort, publicKey });
}

/** Node id the operator gives an external validator in peer specs. */
export function externalNodeId(publicKey: string): string {
  return `ext-${publicKey.slice(0, 12)}`;
}

/**
 * The seed peers of every node: each validator that has a key (by Service DNS name) and every external validator.
 * A node skips its own key, so one list serves all. It lives in a ConfigMap read into `NODE_PEERS` at pod start:
 * a membership change updates the list without restarting the running validators (they learn new peers by the
 * nodes' own announce/pull), and a restarted or new pod starts from the current list.
 */
export function peerList(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validators: ReadonlyArray<{ name: string; publicKey: string }>,
): string {
  const specs = validators.map((v) => peerSpec(v.name, validatorAddress(lc, v.name), v.publicKey));
  for (const ext of spec.externalValidators)
    specs.push(peerSpec(externalNodeId(ext.publicKey), ext.address, ext.publicKey));
  return specs.join(',');
}

export function peersConfigMap(
  lc: LedgerCluster,
  spec: LedgerClusterSpec,
  validators: ReadonlyArray<{ name: string; publicKey: string }>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(lc, clusterNames(lc).peersConfigMap, 'peers'),
    data: { [PEERS_KEY]: peerList(lc, spec, validators) },
  };
}
