// Peer discovery (spec section 4, rule 4): every NODE_PEERS__ANNOUNCE_INTERVAL_MS the node POSTs its registry
// to each peer and merges each peer's GET /peers into its own.
import { MAX_PEERS, type PeerSpec, parsePeerSpec } from '@scriptorium/ledger-protocol';
import type { PeerRegistry } from '../network/peers.ts';
import type { Transport } from '../network/transport.ts';

/**
 * One announce round to every known peer; resolves when every exchange has ended (answered, refused or
 * timed out). `merged` is told of each peer list pulled, with the key of the peer that answered it (its own spec
 * comes first).
 */
export async function announcePeers(
  registry: PeerRegistry,
  transport: Transport,
  merged: (specs: PeerSpec[], announcer: string) => void,
): Promise<void> {
  const body = JSON.stringify({ peers: registry.specs() });
  await Promise.all(
    registry.others().map(async (peer) => {
      try {
        await transport.postRaw(peer, '/peers', body, 2000);
        registry.noteReach(peer.publicKey, true, Date.now());
        const res = await transport.get(peer, '/peers', 2000);
        const list = (res.body as { peers?: unknown }).peers;
        if (res.status !== 200 || !Array.isArray(list)) return;
        const parsed: PeerSpec[] = [];
        for (const text of list.slice(0, MAX_PEERS + 1)) {
          const spec = typeof text === 'string' ? parsePeerSpec(text) : 'not a string';
          if (typeof spec !== 'string') parsed.push(spec);
        }
        merged(parsed, peer.publicKey);
      } catch {
        // An unreachable peer is tried again next round (unless it is forgotten meanwhile: PeerRegistry).
        registry.noteReach(peer.publicKey, false, Date.now());
      }
    }),
  );
}
