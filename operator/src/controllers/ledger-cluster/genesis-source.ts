// `spec.genesis.from`: the chain a LedgerCluster joins, published by the organization that created it, as a
// ConfigMap (any namespace: the operator may read ConfigMaps cluster-wide) or a file at an http(s) URL. Read once,
// when the cluster's own genesis ConfigMap does not exist yet; the reconciler checks and copies it.
import type { LedgerClusterSpec } from '../../api/index.ts';
import { isNotFound, OperatorError } from '../../errors.ts';
import { RESOURCES, resourcePath } from '../../kube/resources.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { LedgerReconcileDeps } from './deps.ts';

type GenesisFrom = NonNullable<NonNullable<LedgerClusterSpec['genesis']>['from']>;

/** Largest genesis file read (a genesis of a hundred validators is about 20 KB). */
const MAX_GENESIS_BYTES = 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/** The published genesis file's text and where it came from; an OperatorError (retried) when it cannot be read. */
export async function readPublishedGenesis(
  deps: LedgerReconcileDeps,
  namespace: string,
  from: GenesisFrom,
): Promise<{ text: string; source: string }> {
  if (from.configMapRef) {
    const ref = from.configMapRef;
    const ns = ref.namespace ?? namespace;
    const source = `ConfigMap ${ns}/${ref.name} key ${ref.key}`;
    let cm: KubeObject & { data?: Record<string, string> };
    try {
      cm = await deps.client.request('GET', resourcePath(RESOURCES.ConfigMap, ns, ref.name));
    } catch (err) {
      if (isNotFound(err)) throw new OperatorError('GENESIS_NOT_FOUND', `${source} not found (yet)`);
      throw err;
    }
    const text = cm.data?.[ref.key];
    if (text === undefined) throw new OperatorError('GENESIS_NOT_FOUND', `${source}: no such key`);
    return { text, source };
  }
  const url = from.url as string;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
  } catch (err) {
    throw new OperatorError('GENESIS_NOT_FOUND', `${url}: ${(err as Error).message.slice(0, 200)}`);
  }
  if (res.status !== 200) throw new OperatorError('GENESIS_NOT_FOUND', `${url}: HTTP ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_GENESIS_BYTES)
    throw new OperatorError('GENESIS_NOT_FOUND', `${url}: over ${MAX_GENESIS_BYTES} bytes`);
  return { text, source: url };
}
