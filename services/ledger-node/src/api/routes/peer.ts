// Peer-to-peer endpoints (mutating, authenticated): /consensus, /mempool, /membership, /block,
// /peers (POST and the authenticated GET).

import { MembershipBody, MempoolBody, PeersBody } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import type { LedgerService } from '../service.ts';
import { parseOr400 } from '../validate.ts';

const config = { protected: true };

export const peerRoutes: FastifyPluginAsync<{ service: LedgerService }> = async (app, { service }) => {
  app.post('/consensus', { config }, async (request) => {
    service.submitConsensus(request.body);
    return { status: 'queued' };
  });

  app.post('/mempool', { config }, async (request) => {
    const { records } = parseOr400(MempoolBody, request.body);
    // Gossip from a peer carries `x-gossip: 1`: its origin fans out to every peer, so it is not relayed again.
    return service.addRecords(records, request.headers['x-gossip'] !== '1');
  });

  app.post('/membership', { config }, async (request) => {
    const { changes } = parseOr400(MembershipBody, request.body);
    return service.addChanges(changes);
  });

  app.post(
    '/block',
    {
      config,
      // A peer that already stored this height answers before the (large) body is parsed.
      preParsing: async (request, reply, payload) => {
        const header = request.headers['x-block-height'];
        const height = typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
        if (height !== undefined && service.hasHeight(height)) {
          payload.resume();
          return reply.send({ height, status: 'known' });
        }
        return payload;
      },
    },
    async (request) => service.receiveBlock(request.body),
  );

  app.post('/peers', { config }, async (request) => {
    const { peers } = parseOr400(PeersBody, request.body);
    return service.mergePeers(peers);
  });

  app.get('/peers', { config }, async () => ({ peers: service.listPeers() }));
};
