// The read-only web console (spec section 4, GET /ui): the page, its built files under /ui/assets/, and the
// read-only peer list its cluster board reads (GET /ui/peers, open and CORS like the other read endpoints).
import { ErrorBody, route } from '@scriptorium/http';
import { ConsolePeersBody } from '@scriptorium/ledger-protocol';
import { type AssetStore, appPage } from '@scriptorium/web-build';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { consolePage } from '../../console/page.ts';
import { notFound } from '../../errors.ts';
import { r429 } from '../schemas.ts';
import type { LedgerService } from '../service.ts';

const AssetParams = z.object({ file: z.string() });

export interface UiOptions {
  service: LedgerService;
  /** The built console; undefined when it was not built (the page then says so, 503). */
  assets: AssetStore | undefined;
}

export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, { service, assets }) => {
  route(
    app,
    {
      method: 'GET',
      url: '/ui',
      operationId: 'console',
      summary: 'The read-only web console (cluster board, block explorer, tamper feed, proof verifier)',
      tags: ['read'],
      security: 'none',
      responses: {
        200: { description: 'the console page', contentType: 'text/html' },
        429: r429,
        503: {
          description: 'the console is not built in this installation (a page saying so)',
          contentType: 'text/html',
        },
      },
    },
    {},
    async (_request, reply) => {
      const page = appPage(assets, consolePage(service.chainStatus().node_id, service.peerOrigins()));
      return reply.code(page.status).headers(page.headers).send(page.body);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/ui/assets/:file',
      operationId: 'consoleAsset',
      summary: 'A built file of the console (content-hashed name, immutable)',
      tags: ['read'],
      security: 'none',
      internal: true,
      params: AssetParams,
      responses: { 200: { description: 'the file' }, 404: { description: 'no such file', schema: ErrorBody } },
    },
    {},
    async (request, reply) => {
      const found = assets?.response(request.params.file, request.headers['accept-encoding']);
      if (!found) throw notFound('no such file');
      return reply.headers(found.headers).send(found.body);
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '/ui/peers',
      operationId: 'consolePeers',
      summary: 'The read-only peer list of the console’s board: this node, its round, each peer and its height',
      tags: ['read'],
      security: 'none',
      responses: { 200: { description: 'peers', schema: ConsolePeersBody }, 429: r429 },
    },
    { config: { cors: true } },
    async () => service.consolePeers(),
  );
};
