// GET / — the app page; GET /assets/:file — the app's built, content-hashed files (web/dist, see src/web/build.ts).
import { route } from '@scriptorium/http';
import { type AssetStore, appPage, loadAssets } from '@scriptorium/web-build';
import type { FastifyInstance } from 'fastify';
import { APP_PAGE } from '../../web/page.ts';
import { WEB_DIST } from '../../web/paths.ts';
import { r429, rateLimitHeaders } from '../responses.ts';

export interface WebRoutesOptions {
  /** The build to serve (default web/dist). */
  dist?: string;
}

export default async function webRoutes(app: FastifyInstance, opts: WebRoutesOptions): Promise<void> {
  const dist = opts.dist ?? WEB_DIST;
  // Read once; while there is no build yet (a checkout before `make web`), each page request looks again.
  let assets: AssetStore | undefined = loadAssets(dist);
  if (!assets) app.log.warn({ dist }, 'web app not built: GET / serves a page without the app (run make web)');
  const current = () => {
    assets ??= loadAssets(dist);
    return assets;
  };

  const pageUrl = '/';
  route(
    app,
    {
      method: 'GET',
      url: pageUrl,
      operationId: 'appPage',
      summary: 'App page',
      description:
        'The web app: an HTML page with a strict, nonce-based Content-Security-Policy (fresh nonce per response) ' +
        'that loads the built app from /assets/.',
      tags: ['web'],
      security: 'none',
      responses: {
        200: {
          description: 'app page, with a content-security-policy header',
          contentType: 'text/html',
          headers: {
            'Content-Security-Policy': { description: 'nonce-based policy', schema: { type: 'string' } },
            ...rateLimitHeaders,
          },
        },
        429: r429,
      },
    },
    {
      onRequest: app.rateLimits.hook(
        pageUrl,
        [{ name: 'page:ip', limit: app.rateLimits.perMinute(pageUrl, 120), windowMs: 60_000 }],
        (req) => req.ip,
      ),
    },
    async (_request, reply) => {
      const page = appPage(current(), APP_PAGE);
      return reply.code(page.status).headers(page.headers).send(page.body);
    },
  );

  // The built files are not part of the API: a plain route, outside the OpenAPI document and the route specs.
  const assetUrl = '/assets/:file';
  app.get<{ Params: { file: string } }>(
    assetUrl,
    {
      onRequest: app.rateLimits.hook(
        assetUrl,
        [{ name: 'asset:ip', limit: app.rateLimits.perMinute(assetUrl, 600), windowMs: 60_000 }],
        (req) => req.ip,
      ),
    },
    async (request, reply) => {
      const found = current()?.response(request.params.file, request.headers['accept-encoding']);
      if (!found) {
        return reply
          .code(404)
          .headers({ 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
          .send('not found');
      }
      return reply.headers(found.headers).send(found.body);
    },
  );
}
