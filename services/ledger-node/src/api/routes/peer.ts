// Peer-to-peer endpoints (mutating, authenticated): /consensus, /mempool, /membership, /block,
// /peers (POST and the authenticated GET).

import { route } from '@scriptorium/http';
import { AcceptedBody, MembershipBody, PeerListBody, PeersBody } from '@scriptorium/ledger-protocol';
import type { FastifyPluginAsync } from 'fastify';
import {
  BlockReceipt,
  CheckedByNode,
  MempoolRequest,
  PeersMerged,
  QueuedBody,
  r400,
  r401,
  r413,
  r429,
  r503,
} from '../schemas.ts';
import type { LedgerService } from '../service.ts';

const protectedRoute = { config: { protected: true } };
/** What every mutating peer endpoint may answer besides its success (spec section 4). */
const refusals = { 400: r400, 401: r401, 413: r413, 429: r429, 503: r503 };

export const peerRoutes: FastifyPluginAsync<{ service: LedgerService }> = async (app, { service }) => {
  route(
    app,
    {
      method: 'POST',
      url: '/consensus',
      operationId: 'postConsensus',
      summary: 'A signed consensus message (PRE-PREPARE, PREPARE, COMMIT, ROUND_CHANGE)',
      description:
        'Checked by the consensus gate (400 `consensus message refused: <reason> (<detail>)`, reason `malformed`, ' +
        '`wrong_chain`, `unknown_sender` or `bad_signature`) and enqueued (503 when full).',
      tags: ['peer'],
      security: 'clusterToken',
      body: CheckedByNode,
      responses: { 200: { description: 'enqueued', schema: QueuedBody }, ...refusals },
    },
    protectedRoute,
    async (request) => {
      service.submitConsensus(request.body);
      return { status: 'queued' };
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/mempool',
      operationId: 'postMempool',
      summary: 'Gossiped integrity records',
      description:
        'Each record is an object with an `id`, unique within the request; records already seen are not counted. ' +
        'Gossip from a peer carries ' +
        '`x-gossip: 1` and is not relayed again.',
      tags: ['peer'],
      security: 'clusterToken',
      body: MempoolRequest,
      responses: { 200: { description: 'how many records were new', schema: AcceptedBody }, ...refusals },
    },
    protectedRoute,
    // Gossip from a peer carries `x-gossip: 1`: its origin fans out to every peer, so it is not relayed again.
    async (request) => service.addRecords(request.body.records, request.headers['x-gossip'] !== '1'),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/membership',
      operationId: 'postMembership',
      summary: 'Gossiped validator changes (ADD or REMOVE a public key)',
      tags: ['peer'],
      security: 'clusterToken',
      body: MembershipBody,
      responses: {
        200: {
          description: 'how many changes were taken: new here, and changing the next height’s validator set',
          schema: AcceptedBody,
        },
        ...refusals,
      },
    },
    protectedRoute,
    async (request) => service.addChanges(request.body.changes),
  );

  route(
    app,
    {
      method: 'POST',
      url: '/block',
      operationId: 'postBlock',
      summary: 'A finalized block pushed by a peer',
      description:
        'Checked against its finality certificate (400 when it does not verify). A peer may send `x-block-height`: ' +
        'a node that already stores that height answers `known` before parsing the body.',
      tags: ['peer'],
      security: 'clusterToken',
      body: CheckedByNode,
      responses: { 200: { description: 'what the node did with the block', schema: BlockReceipt }, ...refusals },
    },
    {
      ...protectedRoute,
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

  route(
    app,
    {
      method: 'POST',
      url: '/peers',
      operationId: 'postPeers',
      summary:
        'Merge peer specs (`<node_id>@<host>:<port>|<public_key>`) into the registry: the first is the announcer’s own, and may move its address; the rest only add unknown keys',
      tags: ['peer'],
      security: 'clusterToken',
      body: PeersBody,
      responses: { 200: { description: 'specs added and addresses updated', schema: PeersMerged }, ...refusals },
    },
    protectedRoute,
    async (request) => service.mergePeers(request.body.peers),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/peers',
      operationId: 'listPeers',
      summary: 'The known peer specs, the node’s own first',
      tags: ['peer'],
      security: 'clusterToken',
      responses: { 200: { description: 'peer specs', schema: PeerListBody }, 401: r401, 429: r429 },
    },
    protectedRoute,
    async () => ({ peers: service.listPeers() }),
  );
};
