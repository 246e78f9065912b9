// POST /api/v1/translate (registered with that prefix).
import type { FastifyInstance } from 'fastify';
import { route } from '../../../http/route-spec.ts';
import { TranslateBatch, TranslateResult } from '../../../http/schemas.ts';
import { translateBatch } from '../../../services/translate.ts';
import { r400, r401, r402, r403, r429, r502, rateLimitHeaders } from '../../responses.ts';

export default async function translateRoutes(app: FastifyInstance): Promise<void> {
  const url = app.prefix;
  const rule = { name: 'translate:key', limit: app.rateLimits.perMinute(url, 600), windowMs: 60_000 };
  // On PostgreSQL the rate-limit hit rides with the reservation (one statement, see the metering module); elsewhere
  // (single-process memory store) it is a hook like on the other routes.
  const shared = app.rateLimits.shared;
  route(
    app,
    {
      method: 'POST',
      url: '',
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
      onRequest: shared
        ? [app.authenticate.apiKey]
        : [app.authenticate.apiKey, app.rateLimits.hook(url, [rule], (req) => req.principal!.keyId)],
    },
    async (request, reply) =>
      translateBatch(
        app,
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
