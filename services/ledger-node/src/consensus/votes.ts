/** PREPARE and COMMIT: counting votes, locking on a prepared proposal, deciding on a commit quorum. */
import { type CommitMessage, type PrepareMessage, sealBytes } from '@scriptorium/ledger-protocol';
import type { Height } from './height.ts';
import { validateCommit } from './validation/index.ts';

export function onPrepare(h: Height, msg: PrepareMessage): void {
  // A PREPARE's content is its envelope, which the gate checked; the proposal it votes for may come later.
  h.record(msg);
  if (msg.round === h.round) checkPrepared(h);
}

/** Prepared = a proposal for this round plus a quorum of PREPAREs for its hash: lock, then COMMIT. */
export function checkPrepared(h: Height): void {
  const m = h.store.peek(h.round);
  const proposal = m?.proposal;
  if (!m || !proposal || h.sent.commit !== null) return;
  const prepares = m.preparesFor(proposal.block_hash);
  if (prepares.length < h.v.quorum) return;
  h.locked = { round: h.round, block: proposal.block, prepares: prepares.slice(0, h.v.quorum) };
  const seal = h.cfg.sign(sealBytes(h.cfg.chainId, h.ctx.height, h.round, proposal.block_hash));
  const commit = h.sign<CommitMessage>({
    ...h.base('COMMIT'),
    block_hash: proposal.block_hash,
    seal,
  } as Omit<CommitMessage, 'signature'>);
  h.sent.commit = commit;
  h.persist();
  h.broadcast(commit);
  h.record(commit);
  checkCommitted(h, h.round);
}

export function onCommit(h: Height, msg: CommitMessage): void {
  const verdict = validateCommit(h.v, msg);
  if (!verdict.ok) {
    h.reject(msg, 'invalid', verdict.reason);
    return;
  }
  h.record(msg);
  checkCommitted(h, msg.round);
}

/** Committed = a quorum of COMMITs of one round for one known block, in any round (late quorums count). */
export function checkCommitted(h: Height, round: number): void {
  if (h.decided) return;
  const m = h.store.peek(round);
  if (!m) return;
  for (const [hash, commits] of m.commitsByHash()) {
    if (commits.length < h.v.quorum) continue;
    const block = h.blocks.get(hash);
    if (!block) continue;
    h.decided = true;
    const seals = commits
      .map((c) => ({ validator: c.author, round, signature: c.seal }))
      .sort((a, b) => (a.validator < b.validator ? -1 : 1));
    h.out.push({ type: 'finalize', block: { ...block, commit_signatures: seals }, round });
    return;
  }
}
