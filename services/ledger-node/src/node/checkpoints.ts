// The node's checkpoints: the book (checkpoint/book.ts) on the node's chain and key, the witnessing coordinator on
// a validator, their metrics, and what the HTTP layer asks of them (api/routes/checkpoint.ts).
//   finalized block → chain.log (the tree) → coordinator.onBlock (a set change: a checkpoint at once)
//   slot timer → coordinator round → peers' POST /checkpoint/sign → witnesses' add-checkpoint → book.accept
//     → peers' POST /checkpoint/cosigned → their book.accept (split views refused and counted)
import { type Block, blockHash, defaultOrigin, toHex, verifySignature } from '@scriptorium/ledger-protocol';
import { createSigner } from '@scriptorium/ledger-protocol/keys';
import type { Registry } from 'prom-client';
import type { CheckpointService } from '../api/routes/checkpoint.ts';
import { CheckpointBook } from '../checkpoint/book.ts';
import { WitnessCoordinator } from '../checkpoint/coordinator.ts';
import { type CheckpointMetrics, createCheckpointMetrics } from '../checkpoint/metrics.ts';
import { WitnessClient } from '../checkpoint/witness-client.ts';
import { badRequest, NodeError, notFound } from '../errors.ts';
import type { LedgerNode } from './node.ts';

export interface NodeCheckpoints extends CheckpointService {
  readonly book: CheckpointBook;
  readonly metrics: CheckpointMetrics;
  start(): void;
  stop(): Promise<void>;
}

/** How long a peer's signature request waits for a block it has not finalized yet. */
const SIGN_WAIT_MS = 2000;
/** Finality times kept for blocks no witnessed checkpoint covers yet (the latency histogram's start points). */
const MAX_PENDING_TIMES = 100_000;

export function attachCheckpoints(node: LedgerNode, registry: Registry): NodeCheckpoints {
  const { config, chain } = node;
  const log = node.logger.child({ name: 'node.checkpoint' });
  const settings = config.checkpoints;
  const finalizedAt = new Map<number, number>();
  let metrics: CheckpointMetrics | undefined;
  const book = new CheckpointBook({
    origin: settings.origin ?? defaultOrigin(chain.chainId),
    chain,
    witnesses: settings.witnesses,
    threshold: settings.threshold,
    signer: createSigner(node.keys.privateKey),
    verify: verifySignature,
    onWitnessed: (height) => {
      const at = finalizedAt.get(height);
      if (at === undefined) return;
      finalizedAt.delete(height);
      metrics?.witnessLatency.observe((Date.now() - at) / 1000);
    },
  });
  metrics = createCheckpointMetrics(registry, book);
  const client = new WitnessClient();
  const coordinator = new WitnessCoordinator({
    book,
    chain,
    self: node.keys.publicKey,
    validators: () => node.currentValidators(),
    peers: () => node.peers.others(),
    transport: node.transport,
    gossip: node.gossip,
    witnesses: client,
    intervalMs: settings.intervalMs,
    verify: verifySignature,
    metrics,
    log,
  });
  let waiters: Array<() => void> = [];
  node.onFinalized((block) => {
    const h = block.header.height;
    if (settings.witnesses.length > 0) {
      finalizedAt.set(h, Date.now());
      if (finalizedAt.size > MAX_PENDING_TIMES) finalizedAt.delete(finalizedAt.keys().next().value as number);
    }
    for (const wake of waiters) wake();
    coordinator.onBlock(h, block.header.proposer, block.validator_changes.length);
  });
  const reached = (size: number) =>
    new Promise<boolean>((resolve) => {
      if (book.size >= size) return resolve(true);
      const done = () => {
        if (book.size < size) return;
        clearTimeout(timer);
        waiters = waiters.filter((w) => w !== done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiters = waiters.filter((w) => w !== done);
        resolve(false);
      }, SIGN_WAIT_MS);
      waiters.push(done);
    });
  const servedSize = () => {
    const note = book.current();
    return note === undefined ? undefined : Number(note.split('\n')[1]);
  };

  return {
    book,
    metrics,
    start: () => coordinator.start(),
    async stop() {
      await coordinator.stop();
      await client.close();
    },
    current: () => book.current(),
    inclusion(height, size) {
      const n = size ?? servedSize();
      if (n === undefined) throw notFound('no checkpoint yet: give size');
      if (n > book.size) throw notFound(`no tree of size ${n} here (size ${book.size})`);
      if (height >= n) throw notFound(`no block ${height} in the tree of size ${n}`);
      return {
        height,
        size: n,
        block_hash: blockHash((chain.get(height) as Block).header),
        proof: chain.log.inclusion(height, n).map(toHex),
      };
    },
    consistency(from, to) {
      if (to > book.size) throw notFound(`no tree of size ${to} here (size ${book.size})`);
      if (from > to) throw badRequest('from is larger than to');
      return { from, to, proof: chain.log.consistency(from, to).map(toHex) };
    },
    witnessStatus: () => book.status(),
    async sign(size) {
      if (!(await reached(size)))
        throw new NodeError('not_found', `no block ${size - 1} here yet (height ${chain.height})`);
      return { line: book.sign(size) };
    },
    receive(note) {
      const result = book.accept(note);
      if (result.status === 'conflict') {
        metrics?.conflicts.inc();
        log.error(
          { size: result.size, theirs: result.theirs, ours: result.ours },
          'a peer sent a checkpoint of another history (split view)',
        );
        throw new NodeError('conflict', `${result.reason}: root ${result.theirs}, this node's ${result.ours}`);
      }
      if (result.status === 'invalid') throw badRequest(`checkpoint refused: ${result.reason}`);
      if (result.status === 'ahead') return { status: 'ahead' };
      return { status: result.status, size: result.size };
    },
  };
}
