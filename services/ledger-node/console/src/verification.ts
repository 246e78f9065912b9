// The page's own verification, with @scriptorium/ledger-protocol's one verifier, on @noble in the browser. The
// serving node is trusted for no verdict:
// - the genesis: the node's block 0, checked to be a valid genesis block and, when the reader pinned a hash
//   (`?genesis=` or the field on the verify page), to hash to it; otherwise its hash is shown to compare;
// - a record: its light evidence (GET /evidence), verified from that genesis alone;
// - a block's finality: its seals against the set the membership blocks below it make active (from the evidence of
//   one of its records, or, for a block without records, from the membership blocks themselves);
// - the whole chain, on request: every block from 1 to the tip, each link, body and certificate (ChainVerifier);
// - with the reader's witness policy (trusted witnesses' keys, how many must have cosigned: `?witness=NAME=KEY`,
//   `?threshold=K`, or the fields), a record is valid only when its evidence carries a checkpoint covering its block
//   that enough of those witnesses cosigned (ledger-protocol's checkpoint-evidence).
import {
  type Block,
  blockHash,
  ChainVerifier,
  checkGenesis,
  type EvidenceReport,
  judgeWithPrefetchedSignatures,
  LightEvidence,
  type MembershipEvidence,
  membershipBelow,
  membershipEvidence,
  nobleVerify,
  parseWitnessFlag,
  type Verify,
  verifyEvidence,
  verifyLightEvidence,
  verifyLightFinality,
  type WitnessRequirement,
  webCryptoVerify,
  witnessPolicy,
} from '@scriptorium/ledger-protocol';
import { blockAt, home } from './api.ts';

/** Told how far a verification got: blocks checked of blocks to check. */
export type Progress = (done: number, total: number) => void;

/** The genesis a verification ran against, and whether the reader pinned it. */
export interface GenesisUsed {
  block: Block;
  hash: string;
  pinned: boolean;
}

/** A verdict with the genesis it was reached against (absent when the genesis itself was refused). */
export type Verdict = EvidenceReport & { genesis?: GenesisUsed };

const HASH = /^[0-9a-f]{64}$/;

/** A pinned hash from the reader: 64 lower-case hex characters, or undefined for none. */
export function readPin(text: string | null | undefined): string | undefined {
  const t = (text ?? '').trim().toLowerCase();
  return HASH.test(t) ? t : undefined;
}

/**
 * The reader's witness policy: one `NAME=KEY` per line (KEY a tlog-cosignature verifier key) and a threshold ('' or
 * absent: all of them). Undefined when no witness is given; a string says what is wrong.
 * @example readWitnessPolicy('w1=witness.example/w1+1a2b3c4d+BA…\nw2=…', '2')
 */
export function readWitnessPolicy(lines: string, threshold = ''): WitnessRequirement | string | undefined {
  const entries = lines
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map(parseWitnessFlag);
  const bad = entries.find((e): e is string => typeof e === 'string');
  if (bad !== undefined) return bad;
  if (entries.length === 0) return threshold.trim() === '' ? undefined : 'a threshold without witnesses';
  const t = threshold.trim();
  if (t !== '' && !/^[1-9][0-9]{0,2}$/.test(t)) return 'the threshold is a whole number from 1';
  const policy = witnessPolicy(entries as Array<{ name: string; key: string }>, t === '' ? undefined : Number(t));
  return typeof policy === 'string' ? policy : { policy };
}

/** The serving node's block 0, as a genesis block, checked against the pin when there is one. */
export async function genesisFor(pin?: string): Promise<GenesisUsed> {
  const block = await blockAt(0);
  const check = checkGenesis(block);
  if (!check.ok) throw new Error(`the node's block 0 is not a valid genesis block: ${check.reason}`);
  const hash = blockHash(block.header);
  if (pin !== undefined && hash !== pin)
    throw new Error(`the node's block 0 hashes to ${hash}, not the pinned genesis ${pin}`);
  return { block, hash, pinned: pin !== undefined };
}

async function withGenesis(pin: string | undefined, judge: (g: GenesisUsed) => Promise<EvidenceReport>) {
  let genesis: GenesisUsed;
  try {
    genesis = await genesisFor(pin);
  } catch (err) {
    return { ok: false, lines: [(err as Error).message] } satisfies Verdict;
  }
  try {
    return { ...(await judge(genesis)), genesis } satisfies Verdict;
  } catch (err) {
    return { ok: false, lines: [(err as Error).message], genesis } satisfies Verdict;
  }
}

/**
 * A judgement of the protocol's verifier with its signatures checked natively (WebCrypto's Ed25519) beforehand, and
 * by @noble where the browser cannot: tens of milliseconds less per verdict on a cold page.
 */
const prefetched = <R>(judge: (verify: Verify) => R) =>
  judgeWithPrefetchedSignatures(judge, webCryptoVerify, nobleVerify);

/** Record `index` of block `height`, from its light evidence (and under the reader's witness policy, if any). */
export function judgeRecord(
  height: number,
  index: number,
  pin?: string,
  witnesses?: WitnessRequirement,
): Promise<Verdict> {
  // Fetched while block 0 is: nothing in it is believed before the genesis is checked.
  const evidence = home.evidence(height, index);
  evidence.catch(() => undefined);
  return withGenesis(pin, async (g) => {
    const ev = await evidence;
    return prefetched((verify) => verifyLightEvidence(ev, g.block, verify, undefined, witnesses));
  });
}

/** Light evidence, a proof, a chain or {proof, chain} pasted by the reader: the same verdict as verify-proof. */
export function judgePasted(data: unknown, pin?: string, witnesses?: WitnessRequirement): Promise<Verdict> {
  return withGenesis(pin, async (g) =>
    prefetched((verify) => verifyEvidence(data, { genesis: g.block, verify, ...(witnesses ? { witnesses } : {}) })),
  );
}

/** The membership blocks below `block`, as light evidence; the node's answers are verified with them. */
async function membershipFor(block: Block): Promise<MembershipEvidence[]> {
  if (block.header.prev_membership_height === 0) return [];
  const own = await blockAt(block.header.height);
  if (own.records.length > 0) {
    const parsed = LightEvidence.safeParse(await home.evidence(block.header.height, 0));
    if (parsed.success) return parsed.data.membership;
  }
  // A block without records has no evidence of its own: build the entries from the membership blocks themselves
  // (fetched first: the protocol's walk is synchronous).
  const blocks = new Map<number, Block>();
  for (let h = block.header.prev_membership_height; h > 0 && !blocks.has(h); ) {
    const m = await blockAt(h);
    blocks.set(h, m);
    h = m.header.prev_membership_height < h ? m.header.prev_membership_height : 0;
  }
  return membershipBelow(block.header, (h) => membershipEvidence(blocks.get(h) as Block));
}

/** A block (the node's, or one pasted or edited by the reader): its finality certificate, seal by seal. */
export function judgeBlock(block: Block, pin?: string): Promise<Verdict> {
  if (block.header.height === 0)
    return Promise.resolve({ ok: false, lines: ['block 0 has no certificate: it is the genesis (compare its hash)'] });
  return withGenesis(pin, async (g) => {
    const membership = await membershipFor(block);
    return prefetched((verify) => verifyLightFinality(g.block, membership, block, verify));
  });
}

/** Every block from 1 to the node's tip, in order: links, bodies and certificates (the full walk). */
export function judgeWholeChain(progress: Progress, pin?: string): Promise<Verdict> {
  return withGenesis(pin, async (g) => {
    const tip = (await home.chain()).height;
    const verifier = new ChainVerifier(g.block);
    const lines = [`block 0: chain ${g.block.header.chain_id}, hash ${g.hash}`];
    while (verifier.height < tip) {
      const step = verifier.add(await blockAt(verifier.height + 1));
      if (!step.ok) return { ok: false, lines: [...lines, `block ${step.height}: ${step.reason}`] };
      if (verifier.height % 8 === 0 || verifier.height === tip) progress(verifier.height, tip);
    }
    return {
      ok: true,
      lines: [...lines, `blocks 1–${tip}: each linked to its parent, its body matching its header, final by a quorum`],
    };
  });
}
