// `kubectl scriptorium retire CLUSTER VALIDATOR`: adds the validator to spec.retire with an edit guarded by the
// resourceVersion it was decided on, then follows the operator until the validator has left the chain and its
// workload is gone, printing each step. The operator does the membership change itself (a replacement joins
// first, REMOVE is final before the workload goes, never below a healthy quorum); this command only asks the
// safe way and refuses what the operator would not do now.
import type { LedgerCluster } from '../api/index.ts';
import { isConflict } from '../errors.ts';
import type { KubeClient } from '../kube/client.ts';
import { RESOURCES, resourcePath } from '../kube/resources.ts';

export class PluginError extends Error {
  /** Exit status of the command: 1 for a refusal or a timeout, 2 for a usage or access error. */
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

const condition = (lc: LedgerCluster, type: string) =>
  ((lc.status?.conditions ?? []) as Condition[]).find((c) => c.type === type);

/** Why retiring `validator` now is refused, or undefined (pure). */
export function retireRefusal(lc: LedgerCluster, validator: string): string | undefined {
  const members = (lc.status?.members ?? []).map((m) => m.name);
  if (!members.includes(validator)) {
    return `${validator} is not a member of ${lc.metadata.name} (members: ${members.join(', ') || 'none yet'})`;
  }
  const degraded = condition(lc, 'Degraded');
  if (degraded?.status === 'True' && ['QuorumAtRisk', 'NodesUnreachable'].includes(degraded.reason ?? '')) {
    return `${lc.metadata.name} is Degraded (${degraded.reason}: ${degraded.message}); retiring a validator now would lean on a quorum that is not healthy`;
  }
  if (condition(lc, 'Progressing')?.reason === 'Stalled') {
    return `${lc.metadata.name} is stalled (${condition(lc, 'Progressing')?.message}); a membership change cannot be finalized now`;
  }
  return undefined;
}

/** True once the validator is gone: not a member, no change pending, the current generation observed. */
export function retired(lc: LedgerCluster, validator: string): boolean {
  return (
    !(lc.status?.members ?? []).some((m) => m.name === validator) &&
    !lc.status?.pendingChange &&
    lc.status?.observedGeneration === lc.metadata.generation
  );
}

/** The line to print for what the operator says now (the Progressing condition and the pending change). */
export function progressLine(lc: LedgerCluster): string {
  const p = condition(lc, 'Progressing');
  const pending = lc.status?.pendingChange;
  return [
    p ? `${p.reason}: ${p.message}` : 'waiting for the operator',
    pending ? `(pending ${pending.kind} ${pending.validator})` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

export interface RetireOptions {
  timeoutMs: number;
  pollMs?: number;
  force?: boolean;
  wait?: boolean;
  print: (line: string) => void;
}

async function read(client: KubeClient, namespace: string, name: string): Promise<LedgerCluster> {
  try {
    return await client.request<LedgerCluster>('GET', resourcePath(RESOURCES.LedgerCluster, namespace, name));
  } catch (err) {
    if ((err as { status?: number }).status === 404)
      throw new PluginError(`LedgerCluster ${namespace}/${name} not found`, 2);
    throw err;
  }
}

export async function retire(
  client: KubeClient,
  namespace: string,
  name: string,
  validator: string,
  o: RetireOptions,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const lc = await read(client, namespace, name);
    if (lc.spec.retire?.includes(validator)) {
      o.print(`${validator} is already in spec.retire`);
      break;
    }
    const refusal = retireRefusal(lc, validator);
    if (refusal && !o.force) throw new PluginError(`refused: ${refusal} (--force asks anyway)`);
    try {
      await client.request('PATCH', resourcePath(RESOURCES.LedgerCluster, namespace, name), {
        contentType: 'application/merge-patch+json',
        // The resourceVersion makes the edit conditional: a concurrent edit of the list is never overwritten.
        body: {
          metadata: { resourceVersion: lc.metadata.resourceVersion },
          spec: { retire: [...(lc.spec.retire ?? []), validator] },
        },
      });
      o.print(`spec.retire of ${namespace}/${name} now lists ${validator}`);
      break;
    } catch (err) {
      if (isConflict(err) && attempt < 5) continue;
      throw err;
    }
  }
  if (o.wait === false) return;
  const started = Date.now();
  let last = '';
  for (;;) {
    const lc = await read(client, namespace, name);
    if (retired(lc, validator)) {
      o.print(
        `[${Math.round((Date.now() - started) / 1000)}s] ${validator} retired: no longer a member; ${progressLine(lc)}`,
      );
      return;
    }
    const line = progressLine(lc);
    if (line !== last) {
      o.print(`[${Math.round((Date.now() - started) / 1000)}s] ${line}`);
      last = line;
    }
    if (Date.now() - started > o.timeoutMs) {
      throw new PluginError(
        `timed out after ${Math.round(o.timeoutMs / 1000)} s; ${validator} is still a member (${line}); the operator goes on`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, o.pollMs ?? 2000));
  }
}
