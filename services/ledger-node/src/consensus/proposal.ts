/** PRE-PREPARE: accepting a proposal (and voting for it), proposing as the round's proposer. */
import {
  type Block,
  blockHash,
  checkBody,
  type PrePrepareMessage,
  type PrepareMessage,
  type RoundChangeCertificate,
  roundChangeCore,
} from '@scriptorium/ledger-protocol';
import type { Height } from './height.ts';
import { highestPrepared, validatePrePrepare } from './validation/index.ts';
import { checkCommitted, checkPrepared } from './votes.ts';

export function onPrePrepare(h: Height, msg: PrePrepareMessage): void {
  const verdict = validatePrePrepare(h.v, msg);
  if (!verdict.ok) {
    h.reject(msg, 'invalid', verdict.reason);
    return;
  }
  if (msg.round > h.round) h.enterRound(msg.round);
  acceptProposal(h, msg);
}

/** Records the proposal and, once per round, signs and sends a PREPARE for it. */
export function acceptProposal(h: Height, msg: PrePrepareMessage): void {
  h.record(msg);
  if (h.sent.prepare === null) {
    const prepare = h.sign<PrepareMessage>({ ...h.base('PREPARE'), block_hash: msg.block_hash } as Omit<
      PrepareMessage,
      'signature'
    >);
    h.sent.prepare = prepare;
    h.persist();
    h.broadcast(prepare);
    h.record(prepare);
  }
  checkPrepared(h);
  checkCommitted(h, h.round);
}

/** As proposer of a round > 0 with a quorum of ROUND_CHANGEs: re-propose the highest prepared block, or a new one. */
export function tryPropose(h: Height): void {
  const r = h.round;
  if (r === 0 || h.decided || h.sent.proposal !== null || !h.isProposer(r)) return;
  if (h.pendingProposal?.round === r) return;
  const rcs = [...(h.store.peek(r)?.roundChanges.values() ?? [])];
  if (rcs.length < h.v.quorum) return;
  const highest = highestPrepared(rcs);
  const justification: RoundChangeCertificate = {
    round_changes: rcs.map(roundChangeCore),
    prepares: highest?.prepares ?? [],
  };
  if (highest === null) {
    h.pendingProposal = { round: r, justification };
    h.out.push({ type: 'request-proposal', height: h.ctx.height, round: r });
    return;
  }
  propose(h, highest.prepared_block as Block, justification);
}

function propose(h: Height, block: Block, justification: RoundChangeCertificate | undefined): void {
  const unsigned = { ...h.base('PRE-PREPARE'), block_hash: blockHash(block.header) };
  const signed = h.sign<PrePrepareMessage>(unsigned as Omit<PrePrepareMessage, 'signature'>);
  const msg: PrePrepareMessage = justification ? { ...signed, block, justification } : { ...signed, block };
  h.sent.proposal = msg;
  h.pendingProposal = null;
  h.persist();
  h.broadcast(msg);
  acceptProposal(h, msg);
}

/** The driver's answer to `request-proposal`: propose it if it still fits (same height and round, our block). */
export function onProposalReady(h: Height, height: number, round: number, block: Block): void {
  if (!h.running || h.decided) return;
  if (height !== h.ctx.height || round !== h.round || h.sent.proposal !== null) return;
  if (!h.isProposer(round)) return;
  let justification: RoundChangeCertificate | undefined;
  if (round > 0) {
    if (h.pendingProposal?.round !== round) return;
    justification = h.pendingProposal.justification;
  }
  const hdr = block.header;
  if (
    hdr.chain_id !== h.cfg.chainId ||
    hdr.height !== h.ctx.height ||
    hdr.parent_hash !== h.ctx.parentHash ||
    hdr.prev_membership_height !== h.ctx.prevMembershipHeight ||
    hdr.proposer !== h.cfg.self ||
    block.commit_signatures.length !== 0 ||
    !checkBody(block).ok
  ) {
    return;
  }
  propose(h, block, justification);
}
