// `kubectl scriptorium verify-proof URL HEIGHT INDEX`: fetches a record's Merkle proof and the chain from genesis up
// to its block from one node, and verifies everything locally with the ledger's own verification code
// (@scriptorium/ledger-protocol): the proof up to the block's merkle_root, the block's hash, and every block's link to
// its parent and finality certificate (a quorum of valid commit seals from the set active at that height, the set
// followed from genesis). Nothing the node says is believed, except the genesis block, whose chain id and hash are
// printed to compare with the cluster's genesis ConfigMap.
import {
  Block,
  blockHash,
  checkLink,
  createValidatorTimeline,
  verifyFinality,
  verifyProof,
} from '@scriptorium/ledger-protocol';
import { z } from 'zod';
import { PluginError } from './retire.ts';

const proofBody = z.object({
  height: z.int().min(0),
  index: z.int().min(0),
  merkle_root: z.string().regex(/^[0-9a-f]{64}$/),
  block_hash: z.string().regex(/^[0-9a-f]{64}$/),
  record: z.unknown(),
  proof: z.array(z.object({ sibling: z.string(), right: z.boolean() })).max(64),
});

/** Reads JSON from the node; the only I/O of the verification (tests and the CLI pass their own). */
export type GetJson = (path: string) => Promise<unknown>;

export interface ProofVerdict {
  valid: boolean;
  lines: string[];
}

/**
 * Verifies record `index` of block `height` as served by one node (see the file comment).
 * @example const v = await verifyRecordProof(get, 12, 0); v.valid
 */
export async function verifyRecordProof(get: GetJson, height: number, index: number): Promise<ProofVerdict> {
  const lines: string[] = [];
  const fail = (why: string): ProofVerdict => ({ valid: false, lines: [...lines, `INVALID: ${why}`] });
  const parsed = proofBody.safeParse(await get(`/proof/${height}/${index}`));
  if (!parsed.success) return fail(`the proof body is not a proof (${parsed.error.issues[0]?.message ?? ''})`);
  const proof = parsed.data;
  if (proof.height !== height || proof.index !== index)
    return fail(`asked for ${height}/${index}, got ${proof.height}/${proof.index}`);

  const blockAt = async (h: number) => {
    const b = Block.safeParse(await get(`/blocks/${h}`));
    if (!b.success) throw new PluginError(`block ${h} is not a block (${b.error.issues[0]?.message ?? ''})`);
    if (b.data.header.height !== h) throw new PluginError(`asked for block ${h}, got ${b.data.header.height}`);
    return b.data;
  };
  let parent: Block;
  try {
    parent = await blockAt(0);
  } catch (err) {
    return fail((err as Error).message);
  }
  lines.push(`genesis: chain ${parent.header.chain_id}, hash ${blockHash(parent.header)}`);
  const timeline = createValidatorTimeline(parent);
  let target = parent;
  let finality = '';
  for (let h = 1; h <= height; h++) {
    let block: Block;
    try {
      block = await blockAt(h);
    } catch (err) {
      return fail((err as Error).message);
    }
    const link = checkLink(parent, block);
    if (!link.ok) return fail(`block ${h}: ${link.reason}`);
    const active = timeline.at(h);
    const fin = verifyFinality(block, active);
    if (!fin.ok) return fail(`block ${h}: finality certificate: ${fin.reason}`);
    if (h === height) {
      finality = `${block.commit_signatures.length} seals of ${active.length} active validators (quorum met), round ${fin.round}`;
    }
    timeline.append(block);
    parent = block;
    target = block;
  }
  if (height === 0) finality = 'genesis (trusted as served)';
  const hash = blockHash(target.header);
  if (hash !== proof.block_hash) return fail(`block ${height} hashes to ${hash}, the proof names ${proof.block_hash}`);
  if (
    !verifyProof({
      record: proof.record,
      proof: proof.proof,
      merkle_root: proof.merkle_root,
      header: target.header,
      block_hash: hash,
    })
  ) {
    return fail(`record ${index} does not hash up to block ${height}'s merkle_root through the proof`);
  }
  lines.push(`chain: ${height} block(s) linked to their parents, each with a valid finality certificate`);
  lines.push(`block ${height}: hash ${hash}; finality: ${finality}`);
  lines.push(`record ${index}: proof of ${proof.proof.length} step(s) up to merkle_root ${proof.merkle_root}`);
  lines.push('VALID');
  return { valid: true, lines };
}

/** GET JSON over HTTP(S) from a node's base URL, bounded in time and size; `ca` is a PEM bundle for https. */
export async function httpGetJson(
  baseUrl: string,
  options: { ca?: string; timeoutMs?: number } = {},
): Promise<{ get: GetJson; close: () => Promise<void> }> {
  const { Agent, request } = await import('undici');
  const agent = new Agent(options.ca ? { connect: { ca: options.ca } } : {});
  const base = baseUrl.replace(/\/+$/, '');
  const limit = 32 * 1024 * 1024;
  const get: GetJson = async (path) => {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${base}${path}`, {
        dispatcher: agent,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
    } catch (err) {
      throw new PluginError(`GET ${base}${path}: ${(err as Error).message}`, 2);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        res.body.destroy();
        throw new PluginError(`GET ${base}${path}: body larger than ${limit} bytes`, 2);
      }
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (res.statusCode !== 200)
      throw new PluginError(`GET ${base}${path}: HTTP ${res.statusCode} ${text.slice(0, 200)}`, 2);
    try {
      return JSON.parse(text);
    } catch {
      throw new PluginError(`GET ${base}${path}: not JSON`, 2);
    }
  };
  return { get, close: () => agent.close() };
}
