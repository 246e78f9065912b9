// `kubectl scriptorium rotate-key CLUSTER VALIDATOR`: asks the operator for a new key for one validator by setting
// the `scriptorium.dev/rotate-key` annotation (the same path a GitOps repository takes), then prints each step the
// operator reports (new key, ADD, restart, REMOVE) until it is done. `keys export CLUSTER`: the chain's identity —
// its genesis file and the key each validator runs — as a Secret manifest, kept apart from the chain's backups and
// given to `spec.bootstrap.fromBackup.identitySecretRef` to restore.
import { type LedgerCluster, ROTATE_KEY_ANNOTATION } from '../api/index.ts';
import { STATEFUL_SET } from '../controllers/ledger-cluster/resources.ts';
import type { KubeClient } from '../kube/client.ts';
import { RESOURCES, resourcePath } from '../kube/resources.ts';
import type { KubeObject } from '../kube/types.ts';
import { clusterNames, GENESIS_FILE, KEY_FILE, validatorIndex } from '../specs/ledger-cluster/index.ts';
import { PluginError } from './retire.ts';

/** The annotation value of a request for `validator` made at `now` (a new value is a new request). */
export function rotationRequest(validator: string, now: Date): string {
  return `${validator}@${now.toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

/** Why rotating now is refused (pure). */
export function rotationRefusal(lc: LedgerCluster, validator: string): string | undefined {
  const members = (lc.status?.members ?? []).filter((m) => m.role === 'validator').map((m) => m.name);
  if (!members.includes(validator))
    return `${validator} is not an active validator of ${lc.metadata.name} (validators: ${members.join(', ') || 'none yet'})`;
  const r = lc.status?.keyRotation;
  if (r && r.step !== 'Done')
    return `${lc.metadata.name} is rotating ${r.validator}'s key (step ${r.step}); one rotation at a time`;
  return undefined;
}

/** Where a request stands, as a line to print, and whether it is over. */
export function rotationProgress(lc: LedgerCluster, request: string): { line: string; done: boolean; failed?: string } {
  const r = lc.status?.keyRotation;
  if (!r || r.request !== request) return { line: 'waiting for the operator', done: false };
  if (r.refused) return { line: `refused: ${r.refused}`, done: true, failed: r.refused };
  if (r.step === 'Done') return { line: `done: ${(r.completed ?? []).join(', ')} rotated`, done: true };
  const p = (lc.status?.conditions ?? []).find((c) => c.type === 'Progressing');
  return { line: `${r.validator}: ${r.step}${p?.reason === 'RotatingKey' ? ` — ${p.message}` : ''}`, done: false };
}

export async function rotateKey(
  client: KubeClient,
  namespace: string,
  cluster: string,
  validator: string,
  options: { timeoutMs: number; wait: boolean; print: (line: string) => void; now?: () => Date },
): Promise<void> {
  const path = resourcePath(RESOURCES.LedgerCluster, namespace, cluster);
  const get = () =>
    client.request<LedgerCluster>('GET', path).catch((err) => {
      if ((err as { status?: number }).status === 404)
        throw new PluginError(`LedgerCluster ${namespace}/${cluster} not found`, 2);
      throw err;
    });
  const lc = await get();
  const refusal = rotationRefusal(lc, validator);
  if (refusal) throw new PluginError(refusal);
  const request = rotationRequest(validator, (options.now ?? (() => new Date()))());
  await client.request('PATCH', path, {
    contentType: 'application/merge-patch+json',
    body: {
      metadata: { resourceVersion: lc.metadata.resourceVersion, annotations: { [ROTATE_KEY_ANNOTATION]: request } },
    },
  });
  options.print(`${ROTATE_KEY_ANNOTATION}=${request} set on ${namespace}/${cluster}`);
  if (!options.wait) return;
  const deadline = Date.now() + options.timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const progress = rotationProgress(await get(), request);
    if (progress.line !== last) options.print(progress.line);
    last = progress.line;
    if (progress.failed) throw new PluginError(progress.failed);
    if (progress.done) return;
    await new Promise((r) => setTimeout(r, 2000));
  }
  throw new PluginError(`timed out; the operator goes on (kubectl scriptorium status ${cluster})`);
}

/** The identity Secret of a cluster (pure): its genesis file and, per validator index, the key file its pod runs. */
export function identitySecret(
  cluster: string,
  namespace: string,
  genesis: string,
  keys: ReadonlyArray<{ validator: string; keyFile: string }>,
): KubeObject {
  const data: Record<string, string> = { [GENESIS_FILE]: Buffer.from(genesis).toString('base64') };
  for (const k of keys) {
    const i = validatorIndex(cluster, k.validator);
    if (i !== undefined) data[`v${i}.json`] = Buffer.from(k.keyFile).toString('base64');
  }
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${cluster}-identity`, namespace, labels: { 'scriptorium.dev/identity-of': cluster } },
    type: 'Opaque',
    data,
  };
}

export async function exportIdentity(client: KubeClient, namespace: string, cluster: string): Promise<KubeObject> {
  const cm = await client.request<KubeObject>(
    'GET',
    resourcePath(
      RESOURCES.ConfigMap,
      namespace,
      clusterNames({ metadata: { name: cluster } } as LedgerCluster).genesisConfigMap,
    ),
  );
  const statefulSets = await client.request<{ items: KubeObject[] }>('GET', resourcePath(STATEFUL_SET, namespace), {
    query: { labelSelector: `scriptorium.dev/ledger-cluster=${cluster},app.kubernetes.io/component=validator` },
  });
  const keys: Array<{ validator: string; keyFile: string }> = [];
  for (const sts of statefulSets.items) {
    const volumes = (sts.spec?.template?.spec?.volumes ?? []) as Array<{
      name: string;
      secret?: { secretName?: string };
    }>;
    const secretName = volumes.find((v) => v.name === 'key')?.secret?.secretName;
    if (!secretName) continue;
    const secret = await client.request<KubeObject>('GET', resourcePath(RESOURCES.Secret, namespace, secretName));
    keys.push({
      validator: sts.metadata.name ?? '',
      keyFile: Buffer.from(secret.data?.[KEY_FILE] ?? '', 'base64').toString('utf8'),
    });
  }
  return identitySecret(cluster, namespace, cm.data?.[GENESIS_FILE] ?? '', keys);
}
