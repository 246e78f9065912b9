// POST /api/v1/playground (registered with that prefix).

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { playground } from '../../../domain/playground.ts';
import { payloadTooLarge } from '../../../errors.ts';
import { charLength, PLAYGROUND_MAX_CHARS, PlaygroundRequest, PlaygroundResponse } from '../../../http/schemas.ts';
import { r400, r402, r413, r429, r502, rateLimitHeaders } from '../../responses.ts';

export default async function playgroundRoutes(app: FastifyInstance): Promise<void> {
  const url = app.prefix;
  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'playground',
      summary: 'Translate one string live (public, capped)',
      description:
        'A source longer than 500 characters gives 413 before anything else is done. Limited per IP (per minute and ' +
        'per day) and by a global daily budget (402).',
      tags: ['playground'],
      security: 'none',
      body: PlaygroundRequest,
      responses: {
        200: { description: 'translation and score', schema: PlaygroundResponse, headers: rateLimitHeaders },
        400: r400,
        402: { ...r402, description: 'the playground daily budget is spent' },
        413: r413,
        429: r429,
        502: r502,
      },
    },
    {
      // A request body far beyond 500 characters is refused while reading it (413 too).
      bodyLimit: 16 * 1024,
      // The length check runs first, before validation, rate limits and metering.
      preValidation: async (request) => {
        const source = (request.body as { source?: unknown } | null | undefined)?.source;
        if (typeof source === 'string' && charLength(source) > PLAYGROUND_MAX_CHARS) {
          throw payloadTooLarge('source is longer than 500 characters');
        }
      },
      preHandler: app.rateLimits.hook(
        url,
        [
          { name: 'playground:ip', limit: app.rateLimits.perMinute(url, 5), windowMs: 60_000 },
          { name: 'playground:ip-day', limit: app.config.rateLimits.playgroundPerDay, windowMs: 86_400_000 },
        ],
        (req) => req.ip,
      ),
    },
    async (request) => playground(app, request.body),
  );
}
