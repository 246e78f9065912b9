import type { LedgerCluster } from '../../api/index.ts';

/** The name of the i-th validator of a cluster: `<cluster>-v<i>`. Stable: a name is never reused for another key. */
export function validatorName(cluster: string, index: number): string {
  return `${cluster}-v${index}`;
}

/** The index of a validator name of this cluster, or undefined when the name is not of the form `<cluster>-v<i>`. */
export function validatorIndex(cluster: string, name: string): number | undefined {
  const prefix = `${cluster}-v`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  if (!/^(0|[1-9][0-9]{0,3})$/.test(rest)) return undefined;
  return Number(rest);
}

/**
 * The desired validators: the first `count` names of the sequence `<cluster>-v0, -v1, …`, skipping every name
 * listed in `retire`. Retiring `-v1` of four therefore brings in `-v4`; scaling down drops the highest names.
 * @example desiredValidatorNames('ledger', 4, ['ledger-v1']) // ['ledger-v0', 'ledger-v2', 'ledger-v3', 'ledger-v4']
 */
export function desiredValidatorNames(cluster: string, count: number, retire: readonly string[] = []): string[] {
  const retired = new Set(retire);
  const names: string[] = [];
  // Bounded: at most `count` names plus every retired name are visited.
  for (let i = 0; names.length < count && i < count + retired.size + 1; i++) {
    const name = validatorName(cluster, i);
    if (!retired.has(name)) names.push(name);
  }
  return names;
}

/** Desired validator names of a cluster resource (spec.validators, spec.retire). */
export function desiredValidators(lc: LedgerCluster): string[] {
  return desiredValidatorNames(lc.metadata.name, Math.max(0, lc.spec.validators ?? 0), lc.spec.retire ?? []);
}
