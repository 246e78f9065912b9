import type { FastifyInstance } from 'fastify';
import { type RouteRegistry, route } from '../../../http/route-spec.ts';
import { apiKeyAuth } from '../../../plugins/auth.ts';
import { rateLimit } from '../../../plugins/rate-limit.ts';
import { TranslateBatch, TranslateResult } from '../../../schemas.ts';
import type { AppContext } from '../../../services/context.ts';
import { PostgresRateLimitStore } from '../../../services/rate-limiter.ts';
import { translateBatch } from '../../../services/translate.ts';
import { r400, r401, r402, r403, r429, r502, rateLimitHeaders } from '../../responses.ts';

export function translateRoutes(app: FastifyInstance, registry: RouteRegistry, ctx: AppContext): void {
  const url = '/api/v1/translate';
  const auth = apiKeyAuth(ctx);
  const rule = { name: 'translate:key', limit: ctx.config.rateLimits.perMinute[url] ?? 600, windowMs: 60_000 };
  const shared = ctx.rateLimits instanceof PostgresRateLimitStore;
  route(
    app,
    registry,
    {
      method: 'POST',
      url,
      operationId: 'translate',
      summary: 'Translate a batch of strings (metered)',
      description:
        'Reserves quota and budget, calls the provider for the tier (or the fine-tuned modelOverride), validates the output, ' +
        'retries failing items once with the issues as feedback, and returns the translations with the token counts used.',
      tags: ['translation'],
      security: 'apiKey',
      body: TranslateBatch,
      responses: {
        200: { description: 'TranslateResult', schema: TranslateResult, headers: rateLimitHeaders },
        400: r400,
        401: r401,
        402: r402,
        403: r403,
        429: r429,
        502: r502,
      },
    },
    {
      // On PostgreSQL the rate-limit hit rides with the reservation (one round trip, see meter_admit); elsewhere
      // (single-process memory store) it is a hook like on the other routes.
      onRequest: shared ? [auth] : [auth, rateLimit(ctx, url, [rule], (req) => req.principal!.keyId)],
    },
    async (request, reply) =>
      translateBatch(
        ctx,
        request.principal!,
        request.body,
        shared
          ? {
              route: url,
              bucket: `${rule.name}:${request.principal!.keyId}`,
              limit: rule.limit,
              windowMs: rule.windowMs,
              onDecision: (d) => void reply.header('RateLimitRemaining', String(d.remaining)),
            }
          : undefined,
      ),
  );
}
