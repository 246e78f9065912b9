// The node's integrity watch: the broker watcher and the tamper notifier, attached to a LedgerNode.
//   watcher pass → intake.addRecords (mempool, gossip to peers) → consensus → block applier → onFinalized →
//     watcher.applyFinalized (memory of what is recorded) and notifier.onFinalized (durable deliveries)
// On start the watcher's memory is rebuilt from the stored chain; the notifier catches up on the blocks
// finalized while the node was down (on its very first start it begins at the current tip: history is not
// notified again).
import type { Block } from '@scriptorium/ledger-protocol';
import type { Registry } from 'prom-client';
import type { WatchService } from '../api/routes/watch.ts';
import { createWatcherMetrics, Watcher } from '../broker/index.ts';
import { Notifier } from '../notify/index.ts';
import type { LedgerNode } from './node.ts';

export interface NodeWatch extends WatchService {
  readonly watcher: Watcher | undefined;
  readonly notifier: Notifier | undefined;
  start(): void;
  stop(): Promise<void>;
}

/**
 * The watcher keeps at most this many blocks' worth of records pending in the mempool: enough to keep consensus
 * busy, little enough that a first pass over millions of observations holds a few MB of records, not the whole
 * mempool's capacity.
 */
const WATCH_WINDOW_BLOCKS = 8;
/** A watcher waiting for room asks again after this long even when no block was finalized. */
const ROOM_RECHECK_MS = 1000;

interface DeliveredAnswer {
  delivered?: unknown;
}

export function attachWatch(node: LedgerNode, registry: Registry): NodeWatch {
  const { config } = node;
  const log = node.logger.child({ name: 'node.watch' });
  const window = Math.min(config.mempoolMax, WATCH_WINDOW_BLOCKS * config.maxBlockRecords);
  let roomWaiters: Array<() => void> = [];
  const roomChanged = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        roomWaiters = roomWaiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, ROOM_RECHECK_MS);
      roomWaiters.push(done);
    });
  const watcher = config.watcher
    ? new Watcher(
        config.watcher,
        {
          submit: (records) => node.intake.addRecords(records).accepted,
          room: () => Math.max(0, window - node.mempool.size),
          roomChanged,
          ready: () => node.sync.readiness().ready,
          // This node's place among the validators of the next block (sorted keys), as a fraction of the interval.
          phase: () => {
            const active = [...node.chain.activeSetAt(node.chain.height + 1)].sort();
            const index = active.indexOf(node.keys.publicKey);
            return index < 0 ? 0 : index / active.length;
          },
        },
        { logger: log, metrics: createWatcherMetrics(registry), nodeKey: node.keys.publicKey },
      )
    : undefined;
  const notifier = Notifier.create({
    config: config.notify,
    dataDir: config.dataDir,
    self: node.keys.publicKey,
    chainId: node.chain.chainId,
    logger: log,
    registry,
    ports: {
      activeSetAt: (height) => node.chain.activeSetAt(height),
      evidenceFor: (block, index) => node.chain.evidenceFor(block, index),
      askDelivered: async (validator, eventId, sink) => {
        const peer = node.peers.get(validator);
        if (!peer) return undefined;
        const path = `/notifications/${encodeURIComponent(eventId)}?sink=${encodeURIComponent(sink)}`;
        const res = await node.transport.get(peer, path, 3000).catch(() => undefined);
        if (res?.status !== 200) return undefined;
        return (res.body as DeliveredAnswer).delivered === true;
      },
    },
  });

  const tip = node.chain.height;
  if (watcher) for (let h = 1; h <= tip; h++) watcher.applyFinalized((node.chain.get(h) as Block).records, h);
  if (notifier) {
    if (notifier.cursor < 0) notifier.skipTo(tip);
    else for (let h = notifier.cursor + 1; h <= tip; h++) notifier.onFinalized(node.chain.get(h) as Block);
  }
  node.onFinalized((block) => {
    watcher?.applyFinalized(block.records, block.header.height);
    for (const wake of [...roomWaiters]) wake();
    notifier?.onFinalized(block);
  });

  return {
    watcher,
    notifier,
    start() {
      notifier?.start();
      watcher?.start();
    },
    async stop() {
      await watcher?.stop();
      await notifier?.stop();
    },
    status: () => ({
      watcher: watcher ? watcher.status() : null,
      notifications: notifier
        ? { sinks: notifier.sinks.map((s) => s.name), queued: notifier.queue.size, height: notifier.cursor }
        : null,
    }),
    delivered: (eventId, sink) => notifier?.deliveredBy(eventId, sink) ?? false,
    notify: (channel, token, body) => watcher?.notify(channel, token, body) ?? 'unauthorized',
  };
}
