// The ports (ports.ts) in production: the system clock and timers, and the HTTP(S) network: POST /consensus to
// the registry's validator peers, POST /block for finalized blocks, GET /chain and GET /blocks/{height} for pull
// sync. The state store and the block storage are the WAL files of storage/.
import type { Block, ConsensusMessage, PeerSpec } from '@scriptorium/ledger-protocol';
import type { Gossip } from '../network/gossip.ts';
import type { PeerRegistry } from '../network/peers.ts';
import type { Transport } from '../network/transport.ts';
import type { Clock, ConsensusNetwork, SyncNetwork, Timers } from './ports.ts';

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
  pushBlock: (block: Block, targets: PeerSpec[]) => void,
): ConsensusNetwork {
  return {
    broadcast(msg: ConsensusMessage, to: ReadonlySet<string>) {
      const targets = peers.others().filter((p) => to.has(p.publicKey));
      // A late vote is still useful (a late COMMIT quorum decides), so the timeout is generous.
      consensusGossip.sendRaw('/consensus', JSON.stringify(msg), targets, { timeoutMs: 30_000 });
    },
    pushBlock(block: Block, except: ReadonlySet<string>) {
      const targets = peers.others().filter((p) => !except.has(p.publicKey));
      if (targets.length > 0) pushBlock(block, targets);
    },
  };
}

/** Pull sync over HTTP(S): GET /chain (2 s) and GET /blocks/{height} (10 s) on the bulk transport. */
export function httpSyncNetwork(
  transport: Transport,
  peers: () => PeerSpec[],
  log: { debug(obj: object, msg: string): void },
): SyncNetwork<PeerSpec> {
  return {
    peers,
    height(peer, done) {
      transport.get(peer, '/chain', 2000).then(
        (res) => {
          const h = (res.body as { height?: unknown } | null)?.height;
          done(res.status === 200 && typeof h === 'number' ? h : undefined);
        },
        () => done(undefined),
      );
    },
    block(peer, height, done) {
      transport.get(peer, `/blocks/${height}`, 10_000).then(
        (res) => done(res.status === 200 ? res.body : undefined),
        (err: Error) => {
          log.debug({ peer: peer.nodeId, err: err.message }, 'pull failed');
          done(undefined);
        },
      );
    },
  };
}
