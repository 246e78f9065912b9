// GET / — the app page.
import type { FastifyInstance } from 'fastify';
import { route } from '../../http/route-spec.ts';
import { contentSecurityPolicy, newNonce, renderPage } from '../../web/page.ts';
import { r429, rateLimitHeaders } from '../responses.ts';

export default async function webRoutes(app: FastifyInstance): Promise<void> {
  const url = '/';
  route(
    app,
    {
      method: 'GET',
      url,
      operationId: 'appPage',
      summary: 'App page',
      description: 'HTML page with a strict, nonce-based Content-Security-Policy (fresh nonce per response).',
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
        url,
        [{ name: 'page:ip', limit: app.rateLimits.perMinute(url, 120), windowMs: 60_000 }],
        (req) => req.ip,
      ),
    },
    async (_request, reply) => {
      const nonce = newNonce();
      return reply
        .headers({
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': contentSecurityPolicy(nonce),
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
          'cross-origin-opener-policy': 'same-origin',
        })
        .send(renderPage(nonce));
    },
  );
}
