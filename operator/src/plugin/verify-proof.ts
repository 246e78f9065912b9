// `kubectl scriptorium verify-proof URL HEIGHT INDEX`: fetches a record's light evidence (GET /evidence) from one
// node and judges it with the ledger's one verifier (@scriptorium/ledger-protocol's verifyLightEvidence) against a
// genesis block the plugin pins itself: the LedgerCluster's genesis ConfigMap, or a file. Nothing the node says is
// believed: a node whose block 0 hashes to anything else is refused before its evidence is read. With a witness
// policy (the LedgerCluster's `spec.witnesses` and `spec.witnessPolicy.threshold`, or --witness flags) the evidence
// must also carry a checkpoint covering the record's block that enough of those witnesses cosigned.
import {
  type Block,
  Block as BlockSchema,
  blockHash,
  checkGenesis,
  parseWitnessFlag,
  verifyLightEvidence,
  type WitnessRequirement,
  witnessPolicy,
} from '@scriptorium/ledger-protocol';
import type { LedgerClusterSpecInput } from '../api/index.ts';
import { PluginError } from './retire.ts';

/** What the verification reads from the node (a LedgerNodeClient bound to one base URL; tests pass their own). */
export interface EvidenceSource {
  evidence(height: number, index: number): Promise<unknown>;
  block(height: number): Promise<unknown>;
}

export interface ProofVerdict {
  valid: boolean;
  lines: string[];
}

/**
 * The genesis block a reader trusts, from the text of a genesis file (the genesis ConfigMap's `genesis.json`);
 * `from` names where it came from in the error.
 * @example pinGenesis(readFileSync('genesis.json', 'utf8'), 'genesis.json')
 */
export function pinGenesis(text: string, from: string): Block {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new PluginError(`${from} is not JSON`, 2);
  }
  const parsed = BlockSchema.safeParse(json);
  if (!parsed.success) throw new PluginError(`${from} is not a block (${parsed.error.issues[0]?.message ?? ''})`, 2);
  const check = checkGenesis(parsed.data);
  if (!check.ok) throw new PluginError(`${from} is not a genesis block: ${check.reason}`, 2);
  return parsed.data;
}

/**
 * The witness policy of a LedgerCluster (its witnesses, `witnessPolicy.threshold`, `checkpoints.origin`), or of
 * `--witness NAME=KEY` flags with `--witness-threshold`; undefined when neither names a witness.
 * @example clusterWitnessRequirement(lc.spec) // { policy: { witnesses: [...], threshold: 2 } }
 */
export function witnessRequirement(
  spec: Pick<LedgerClusterSpecInput, 'witnesses' | 'witnessPolicy' | 'checkpoints'> | undefined,
  flags: readonly string[] = [],
  threshold?: string,
): WitnessRequirement | undefined {
  let entries: Array<{ name: string; key: string }>;
  let k: number | undefined;
  let origin: string | undefined;
  if (flags.length > 0) {
    entries = flags.map((f) => {
      const entry = parseWitnessFlag(f);
      if (typeof entry === 'string') throw new PluginError(entry, 2);
      return entry;
    });
    if (threshold !== undefined && !/^[1-9][0-9]{0,2}$/.test(threshold))
      throw new PluginError('--witness-threshold is a whole number from 1', 2);
    k = threshold === undefined ? undefined : Number(threshold);
  } else {
    if (threshold !== undefined) throw new PluginError('--witness-threshold without --witness', 2);
    entries = (spec?.witnesses ?? []).map((w) => ({ name: w.name, key: w.key }));
    k = spec?.witnessPolicy?.threshold;
    origin = spec?.checkpoints?.origin;
  }
  if (entries.length === 0) return undefined;
  const policy = witnessPolicy(entries, k);
  if (typeof policy === 'string') throw new PluginError(`witness policy: ${policy}`, 2);
  return { policy, ...(origin ? { origin } : {}) };
}

/**
 * Verifies record `index` of block `height` as served by one node, against the pinned genesis (see the file comment).
 * @example const v = await verifyRecordEvidence(source, genesis, 12, 0); v.valid
 */
export async function verifyRecordEvidence(
  source: EvidenceSource,
  genesis: Block,
  height: number,
  index: number,
  witnesses?: WitnessRequirement,
): Promise<ProofVerdict> {
  const pinned = blockHash(genesis.header);
  const lines = [`pinned genesis: chain ${genesis.header.chain_id}, hash ${pinned}`];
  if (witnesses)
    lines.push(
      `witness policy: ${witnesses.policy.threshold} of ${witnesses.policy.witnesses.map((w) => w.name).join(', ')}`,
    );
  const fail = (why: string): ProofVerdict => ({ valid: false, lines: [...lines, `INVALID: ${why}`] });
  const served = BlockSchema.safeParse(await source.block(0));
  if (!served.success) return fail(`the node's block 0 is not a block (${served.error.issues[0]?.message ?? ''})`);
  const servedHash = blockHash(served.data.header);
  if (servedHash !== pinned)
    return fail(`the node serves a block 0 that hashes to ${servedHash}, not the pinned genesis`);
  const evidence = (await source.evidence(height, index)) as { proof?: { height?: unknown; index?: unknown } } | null;
  const asked = evidence?.proof;
  if (asked && (asked.height !== height || asked.index !== index))
    return fail(
      `asked for record ${index} of block ${height}, the node answered with ${asked.index} of ${asked.height}`,
    );
  const report = verifyLightEvidence(evidence, genesis, undefined, undefined, witnesses);
  lines.push(...report.lines.slice(0, report.ok ? undefined : -1));
  if (!report.ok) return fail(report.lines.at(-1) ?? 'unreadable evidence');
  lines.push('VALID');
  return { valid: true, lines };
}
