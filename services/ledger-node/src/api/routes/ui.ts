// The read-only web console (spec section 4, GET /ui): the page, its built files under /ui/assets/, and the
// read-only peer list its cluster board reads (GET /ui/peers, open and CORS like the other read endpoints).
import { type AssetStore, appPage } from '@scriptorium/web-build';
import type { FastifyPluginAsync } from 'fastify';
import { consolePage } from '../../console/page.ts';
import { notFound } from '../../errors.ts';
import type { LedgerService } from '../service.ts';

export interface UiOptions {
  service: LedgerService;
  /** The built console; undefined when it was not built (the page then says so, 503). */
  assets: AssetStore | undefined;
}

export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, { service, assets }) => {
  app.get('/ui', async (_request, reply) => {
    const page = appPage(assets, consolePage(service.chainStatus().node_id, service.peerOrigins()));
    return reply.code(page.status).headers(page.headers).send(page.body);
  });

  app.get<{ Params: { file: string } }>('/ui/assets/:file', async (request, reply) => {
    const found = assets?.response(request.params.file, request.headers['accept-encoding']);
    if (!found) throw notFound('no such file');
    return reply.headers(found.headers).send(found.body);
  });

  app.get('/ui/peers', { config: { cors: true } }, async () => service.consolePeers());
};
