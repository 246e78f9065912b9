import type { FastifyInstance } from 'fastify';
import { type RouteRegistry, route } from '../../../http/route-spec.ts';
import { apiKeyAuth } from '../../../plugins/auth.ts';
import { rateLimit } from '../../../plugins/rate-limit.ts';
import { TranslateBatch, TranslateResult } from '../../../schemas.ts';
import type { AppContext } from '../../../services/context.ts';
import { translateBatch } from '../../../services/translate.ts';
import { r400, r401, r402, r403, r429, r502, rateLimitHeaders } from '../../responses.ts';

export function translateRoutes(app: FastifyInstance, registry: RouteRegistry, ctx: AppContext): void {
  const url = '/api/v1/translate';
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
      onRequest: [
        apiKeyAuth(ctx),
        rateLimit(
          ctx,
          url,
          [{ name: 'translate:key', limit: ctx.config.rateLimits.perMinute[url] ?? 600, windowMs: 60_000 }],
          (req) => req.principal!.keyId,
        ),
      ],
    },
    async (request) => translateBatch(ctx, request.principal!, request.body),
  );
}
