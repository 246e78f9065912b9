// The read-only web console (spec section 4, GET /ui): the page, its built files under /ui/assets/, and the
// read-only peer list its cluster board reads (GET /ui/peers, open and CORS like the other read endpoints).
import { randomBytes } from 'node:crypto';
import type { AssetStore } from '@scriptorium/web-build';
import type { FastifyPluginAsync } from 'fastify';
import { consolePage, contentSecurityPolicy } from '../../console/page.ts';
import { notFound } from '../../errors.ts';
import type { LedgerService } from '../service.ts';

export interface UiOptions {
  service: LedgerService;
  /** The built console; undefined when it was not built (the page then says so, 503). */
  assets: AssetStore | undefined;
}

export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, { service, assets }) => {
  app.get('/ui', async (_request, reply) => {
    if (!assets)
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The ledger console is not built in this installation (make web builds it).\n');
    const nonce = randomBytes(16).toString('base64');
    return reply
      .type('text/html; charset=utf-8')
      .headers({
        'content-security-policy': contentSecurityPolicy(nonce, service.peerOrigins()),
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin',
      })
      .send(consolePage(assets, nonce, service.chainStatus().node_id));
  });

  app.get<{ Params: { file: string } }>('/ui/assets/:file', async (request, reply) => {
    const found = assets?.response(request.params.file, request.headers['accept-encoding']);
    if (!found) throw notFound('no such file');
    return reply.headers(found.headers).send(found.body);
  });

  app.get('/ui/peers', { config: { cors: true } }, async () => service.consolePeers());
};
