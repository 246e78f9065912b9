/**
 * A reader's witness policy: the witnesses it trusts (a name of its choosing and the witness's Ed25519
 * tlog-cosignature verifier key) and how many of them must have cosigned a checkpoint (k of n). What `verify-proof
 * --witness NAME=KEY --witness-threshold K`, the kubectl plugin (from the LedgerCluster's `spec.witnesses`) and the
 * console require of evidence before they call it valid.
 */
import type { Verify } from './finality.ts';
import {
  ALG_COSIGNATURE_V1,
  cosignatureTime,
  type Note,
  parseVerifierKey,
  type VerifierKey,
  verifyNoteSignature,
} from './note.ts';

export interface PolicyWitness {
  /** The reader's name for it (e.g. the LedgerCluster's `spec.witnesses[].name`). */
  name: string;
  key: VerifierKey;
}

export interface WitnessPolicy {
  witnesses: PolicyWitness[];
  /** How many distinct witnesses must have cosigned: 1 ≤ threshold ≤ witnesses. */
  threshold: number;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * One trusted witness from `NAME=KEY` (the `--witness` flag), KEY a tlog-cosignature/v1 verifier key
 * `<key name>+<key id>+<base64>`; a string says what is wrong.
 * @example parseWitnessFlag('w1=witness.example/w1+1a2b3c4d+BA…')
 */
export function parseWitnessFlag(text: string): { name: string; key: string } | string {
  const eq = text.indexOf('=');
  if (eq <= 0) return `--witness wants NAME=KEY, got ${JSON.stringify(text.slice(0, 80))}`;
  return { name: text.slice(0, eq), key: text.slice(eq + 1) };
}

/**
 * A policy from named verifier keys and a threshold (default: all of them); a string says what is wrong: a name
 * that is not 1–63 of [A-Za-z0-9._-], a key that is not an Ed25519 cosignature key (type 0x04), a name or key given
 * twice, or a threshold outside 1…n.
 * @example witnessPolicy([{ name: 'w1', key: vkey1 }, { name: 'w2', key: vkey2 }], 2)
 */
export function witnessPolicy(
  entries: ReadonlyArray<{ name: string; key: string }>,
  threshold?: number,
): WitnessPolicy | string {
  if (entries.length === 0) return 'a witness policy names at least one witness';
  const witnesses: PolicyWitness[] = [];
  for (const { name, key } of entries) {
    if (!NAME.test(name)) return `witness name ${JSON.stringify(name.slice(0, 80))}: want 1-63 of [A-Za-z0-9._-]`;
    const parsed = parseVerifierKey(key);
    if (typeof parsed === 'string') return `witness ${name}: ${parsed}`;
    if (parsed.alg !== ALG_COSIGNATURE_V1)
      return `witness ${name}: its key is of type 0x0${parsed.alg}, a witness signs tlog-cosignature/v1 (type 0x04)`;
    if (witnesses.some((w) => w.name === name)) return `witness ${name} is named twice`;
    if (witnesses.some((w) => w.key.name === parsed.name && w.key.keyId === parsed.keyId))
      return `witness ${name} has the key of another witness`;
    witnesses.push({ name, key: parsed });
  }
  const k = threshold ?? witnesses.length;
  if (!Number.isInteger(k) || k < 1 || k > witnesses.length)
    return `the witness threshold is ${k}: want 1 to ${witnesses.length} (the witnesses given)`;
  return { witnesses, threshold: k };
}

/** What a note's cosignatures are worth under a policy. */
export interface CosignatureReport {
  ok: boolean;
  reason?: string;
  /** The policy's witnesses that cosigned, with their cosignature's time (seconds since the epoch). */
  cosigned: Array<{ witness: string; time: number }>;
  /** The policy's witnesses whose cosignature line is there but does not verify. */
  invalid: string[];
  threshold: number;
  witnesses: number;
}

/** Judges the cosignatures of a note (a checkpoint) against a policy. Lines of unknown keys are ignored. */
export function judgeCosignatures(note: Note, policy: WitnessPolicy, verify: Verify): CosignatureReport {
  const cosigned: CosignatureReport['cosigned'] = [];
  const invalid: string[] = [];
  for (const w of policy.witnesses) {
    const lines = note.signatures.filter((s) => s.name === w.key.name && s.keyId === w.key.keyId);
    if (lines.length === 0) continue;
    const good = lines.find((s) => verifyNoteSignature(w.key, note.text, s, verify));
    if (good) cosigned.push({ witness: w.name, time: cosignatureTime(good.signature) ?? 0 });
    else invalid.push(w.name);
  }
  const ok = cosigned.length >= policy.threshold;
  const missing = policy.witnesses.filter((w) => !cosigned.some((c) => c.witness === w.name)).map((w) => w.name);
  return {
    ok,
    ...(ok
      ? {}
      : {
          reason: `cosigned by ${cosigned.length} of the ${policy.witnesses.length} trusted witnesses, the policy wants ${policy.threshold} (${[
            ...missing.filter((m) => !invalid.includes(m)).map((m) => `${m}: no cosignature`),
            ...invalid.map((m) => `${m}: cosignature does not verify`),
          ].join('; ')})`,
        }),
    cosigned,
    invalid,
    threshold: policy.threshold,
    witnesses: policy.witnesses.length,
  };
}
