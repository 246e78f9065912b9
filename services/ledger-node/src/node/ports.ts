// The driver's ports in production: the system clock and timers, the consensus state log on disk, and
// the HTTP(S) network (POST /consensus to the registry's validator peers, POST /block for finalized blocks).
// The simulator (sim/ports.ts) supplies deterministic ones for the same driver.
import type { Block, ConsensusMessage } from '@scriptorium/ledger-protocol';
import type { Gossip } from '../network/gossip.ts';
import type { PeerRegistry } from '../network/peers.ts';
import type { Clock, ConsensusNetwork, Timers } from './driver.ts';

export const systemClock: Clock = { now: () => Date.now() };

export const systemTimers: Timers = {
  after(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/** Consensus traffic over HTTP(S): votes on their own connection pool, blocks through the bulk one. */
export function httpConsensusNetwork(
  peers: PeerRegistry,
  consensusGossip: Gossip,
  pushBlock: (block: Block, targets: ReturnType<PeerRegistry['others']>) => void,
): ConsensusNetwork {
  return {
    broadcast(msg: ConsensusMessage, to: ReadonlySet<string>) {
      const targets = peers.others().filter((p) => to.has(p.publicKey));
      // A late vote is still useful (a late COMMIT quorum decides), so the timeout is generous.
      consensusGossip.sendRaw('/consensus', JSON.stringify(msg), targets, 30_000);
    },
    pushBlock(block: Block, except: ReadonlySet<string>) {
      const targets = peers.others().filter((p) => !except.has(p.publicKey));
      if (targets.length > 0) pushBlock(block, targets);
    },
  };
}
