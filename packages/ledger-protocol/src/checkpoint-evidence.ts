/**
 * The witnessed part of light evidence: a cosigned checkpoint that covers the record's block, and the proofs that tie
 * them together. With it a reader needs nothing of the validators' good faith beyond the genesis: a rebuilt history
 * (even one sealed by a quorum of the validators' own keys) is not in any checkpoint the witnesses cosigned, because
 * a witness cosigns only checkpoints consistent with the last one it cosigned.
 *
 * What a verifier checks, in order: the note is a checkpoint of the expected origin (default: derived from the
 * genesis's chain id); the record's block hash is leaf `height` of its tree (RFC 6962 audit path to its root); the
 * checkpoint's last block (height size − 1) is its last leaf, and is final by the set the membership blocks below it
 * make active (the record's membership blocks and those from the record's block up to it, walked from the pinned
 * genesis); a quorum of that set signed the checkpoint (C2SP note signatures, key name = origin); and, under a witness
 * policy, at least k of the trusted witnesses cosigned it (tlog-cosignature/v1).
 */
import * as z from 'zod';
import { sha256 as platformSha256, verifySignature } from '#platform-crypto';
import { blockHash } from './block.ts';
import {
  blockLeafData,
  type Checkpoint,
  defaultOrigin,
  judgeLogSignatures,
  parseCheckpointNote,
} from './checkpoint.ts';
import {
  type CheckpointVerdict,
  type EvidenceReport,
  judgeFinality,
  MembershipEvidence,
  SealedHeader,
  short,
  walkMembership,
} from './evidence-walk.ts';
import type { Verify } from './finality.ts';
import { fromHex, toHex } from './hex.ts';
import { leafHash, type Sha256 } from './merkle.ts';
import { type Block, HashHex } from './schemas.ts';
import { verifyInclusion } from './tlog-proof.ts';
import { judgeCosignatures, type WitnessPolicy } from './witness-policy.ts';

/** `checkpoint` of light evidence. */
export const CheckpointEvidence = z.strictObject({
  /** The signed checkpoint (C2SP signed note): log signatures of a quorum of validators, witnesses' cosignatures. */
  note: z
    .string()
    .min(1)
    .max(64 * 1024),
  /** Audit path (hex, leaf upwards, RFC 6962) of the record's block hash, leaf `height`, to the checkpoint's root. */
  inclusion: z.array(HashHex).max(63),
  /** The checkpoint's last block (height size − 1): sealed header. */
  tip: SealedHeader,
  /** Audit path of the last block's hash, leaf size − 1. */
  tip_inclusion: z.array(HashHex).max(63),
  /** The membership blocks from the record's block (included) up to below the last one, oldest first. */
  membership: z.array(MembershipEvidence).max(1024),
});
export type CheckpointEvidence = z.infer<typeof CheckpointEvidence>;

/** What a reader requires of the witnessed part: its witness policy and, when it is not the default, the origin. */
export interface WitnessRequirement {
  policy: WitnessPolicy;
  /** The log's origin line; default `defaultOrigin(genesis chain id)`. */
  origin?: string;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/**
 * Judges `ev` (the record's block `block`, already proven final from `genesis` with `membership` below it) and adds
 * its lines to `report`. Without a requirement the cosignatures are not judged (nothing is trusted), the rest is.
 * Returns the verdict, or null with the failing line added.
 */
export function judgeCheckpointEvidence(
  ev: CheckpointEvidence,
  genesis: Block,
  membership: readonly MembershipEvidence[],
  block: SealedHeader,
  report: EvidenceReport,
  requirement: WitnessRequirement | undefined,
  verify: Verify = verifySignature,
  sha?: Sha256,
): CheckpointVerdict | null {
  const { lines } = report;
  const hash = sha ?? platformSha256;
  const fail = (line: string) => {
    lines.push(line);
    return null;
  };
  const parsed = parseCheckpointNote(ev.note);
  if (typeof parsed === 'string') return fail(`the checkpoint is not a signed checkpoint: ${parsed}`);
  const { note, checkpoint: cp } = parsed;
  const origin = requirement?.origin ?? defaultOrigin(genesis.header.chain_id);
  if (cp.origin !== origin)
    return fail(`the checkpoint is of log ${JSON.stringify(cp.origin)}, not ${JSON.stringify(origin)}`);
  const H = block.header.height;
  if (cp.size <= H) return fail(`the checkpoint (size ${cp.size}) does not reach block ${H}`);
  const where = `checkpoint ${cp.size} (root ${short(toHex(cp.root))})`;
  if (!includes(cp, H, blockHash(block.header, sha), ev.inclusion, hash))
    return fail(
      `block ${H} (hash ${short(blockHash(block.header, sha))}) is not leaf ${H} of ${where}: the checkpoint is of another history`,
    );
  const tip = ev.tip;
  if (tip.header.height !== cp.size - 1)
    return fail(`the checkpoint's last block is given at height ${tip.header.height}, its size says ${cp.size - 1}`);
  if (!includes(cp, cp.size - 1, blockHash(tip.header, sha), ev.tip_inclusion, hash))
    return fail(`block ${cp.size - 1} given as the checkpoint's last is not its last leaf`);
  if (ev.membership.some((m) => m.header.height < H))
    return fail(`the checkpoint's membership blocks start below block ${H} (those are the record's own)`);
  // The set active at the checkpoint's last block, walked from the genesis: on a scratch report, so the record's
  // membership blocks are not told twice.
  const scratch: EvidenceReport = {
    ok: false,
    lines: [],
    ...(report.genesisHash ? { genesisHash: report.genesisHash } : {}),
  };
  const above = ev.membership;
  const active = walkMembership(genesis, [...membership, ...above], tip.header, scratch, verify, sha);
  if (active === null) return fail(`the checkpoint's last block ${cp.size - 1}: ${scratch.lines.at(-1)}`);
  if (tip.header.height !== H || blockHash(tip.header, sha) !== blockHash(block.header, sha)) {
    if (!judgeFinality(tip, active, scratch, verify, sha))
      return fail(`the checkpoint's last block: ${scratch.lines.at(-1)}`);
  }
  const log = judgeLogSignatures(note, cp.origin, active, verify);
  if (!log.ok) return fail(`${where}: the log's signatures: ${log.reason}`);
  const verdict: CheckpointVerdict = {
    origin: cp.origin,
    size: cp.size,
    root: toHex(cp.root),
    signers: log.signers.length,
    quorum: log.quorum,
  };
  lines.push(
    `${where} of ${cp.origin}: block ${H} is leaf ${H} (${ev.inclusion.length} proof steps), block ${cp.size - 1} its last${above.length > 0 ? ` (${above.length} membership block${above.length === 1 ? '' : 's'} from ${H} on)` : ''}; signed by ${log.signers.length} of the ${log.validators} validators active there (quorum ${log.quorum})`,
  );
  if (requirement === undefined) {
    lines.push('its cosignatures are not judged: no witness policy was given');
    return verdict;
  }
  const cosigs = judgeCosignatures(note, requirement.policy, verify);
  if (!cosigs.ok) return fail(`${where}: ${cosigs.reason}`);
  verdict.cosigned = cosigs.cosigned;
  lines.push(
    `cosigned by ${cosigs.cosigned.map((c) => `${c.witness} (${iso(c.time)})`).join(', ')}: ${cosigs.cosigned.length} of ${cosigs.witnesses} trusted witnesses, the policy wants ${cosigs.threshold}`,
  );
  return verdict;
}

function includes(cp: Checkpoint, index: number, hashHex: string, path: readonly string[], sha: Sha256): boolean {
  return verifyInclusion(index, cp.size, leafHash(blockLeafData(hashHex), sha), path.map(fromHex), cp.root, sha);
}

/**
 * The witnessed part of a record's evidence, from what a node holds: the cosigned note, the checkpoint tree's
 * audit paths of the record's block and of the checkpoint's last block (hex), that block sealed, and the membership
 * blocks from the record's block up to below it.
 */
export function checkpointEvidence(parts: {
  note: string;
  inclusion: readonly Uint8Array[];
  tip: SealedHeader;
  tipInclusion: readonly Uint8Array[];
  membership: readonly MembershipEvidence[];
}): CheckpointEvidence {
  return {
    note: parts.note,
    inclusion: parts.inclusion.map(toHex),
    tip: { header: parts.tip.header, commit_signatures: parts.tip.commit_signatures },
    tip_inclusion: parts.tipInclusion.map(toHex),
    membership: [...parts.membership],
  };
}
