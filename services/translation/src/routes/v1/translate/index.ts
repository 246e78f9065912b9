// POST /api/v1/translate and POST /api/v1/translate/file (registered with that prefix).

import { route } from '@scriptorium/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitGate } from '../../../domain/metering.ts';
import { translateBatch } from '../../../domain/translate.ts';
import { JsonAnswer, translateFile } from '../../../domain/translate-file.ts';
import {
  DryRunResult,
  FILE_MAX_BYTES,
  TranslateBatch,
  TranslateFileRequest,
  TranslateFileResult,
  TranslateResult,
} from '../../../http/schemas.ts';
import { r400, r401, r402, r403, r413, r429, r502, rateLimitHeaders } from '../../responses.ts';

/** JSON bodies of the file route: the file's limit plus room for JSON escaping (a larger body is 413 too). */
const FILE_BODY_LIMIT = 3 * FILE_MAX_BYTES;

export default async function translateRoutes(app: FastifyInstance): Promise<void> {
  // On PostgreSQL the rate-limit hit rides with the reservation (one statement, see the metering module); elsewhere
  // (single-process memory store) it is a hook like on the other routes.
  const shared = app.rateLimits.shared;
  const limited = (url: string, name: string, perMinute: number) => {
    const rule = { name, limit: app.rateLimits.perMinute(url, perMinute), windowMs: 60_000 };
    return {
      onRequest: shared
        ? [app.authenticate.apiKey]
        : [app.authenticate.apiKey, app.rateLimits.hook(url, [rule], (req) => req.principal!.keyId)],
      gate: (request: FastifyRequest, reply: FastifyReply): RateLimitGate | undefined =>
        shared
          ? {
              route: url,
              bucket: `${rule.name}:${request.principal!.keyId}`,
              limit: rule.limit,
              windowMs: rule.windowMs,
              onDecision: (d) => void reply.header('RateLimitRemaining', String(d.remaining)),
            }
          : undefined,
    };
  };

  const batch = limited(app.prefix, 'translate:key', 600);
  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'translate',
      summary: 'Translate a batch of strings (metered)',
      description:
        'Answers what the organization’s translation memory holds (when on: no provider call, no tokens, ' +
        '`fromMemory`), reserves quota and budget, calls the provider for the tier (or the fine-tuned modelOverride), ' +
        'validates the output, retries failing items once with the issues as feedback, and returns the translations ' +
        'with the token counts used. `dryRun` answers the estimate instead, calling and metering nothing.',
      tags: ['translation'],
      security: 'apiKey',
      body: TranslateBatch,
      responses: {
        200: {
          description: 'TranslateResult (or, with dryRun, what the call would reserve)',
          schema: TranslateResult.or(DryRunResult),
          headers: rateLimitHeaders,
        },
        400: r400,
        401: r401,
        402: r402,
        403: r403,
        429: r429,
        502: r502,
      },
    },
    { onRequest: batch.onRequest },
    async (request, reply) => translateBatch(app, request.principal!, request.body, batch.gate(request, reply)),
  );

  const fileUrl = `${app.prefix}/file`;
  const file = limited(fileUrl, 'translate-file:key', 120);
  route(
    app,
    {
      method: 'POST',
      url: '/file',
      operationId: 'translateFile',
      summary: 'Translate a locale file: json, arb, xliff, po or android (metered)',
      description:
        'Parses the file (400 with the line and the reason when it does not parse; 413 above ' +
        `${FILE_MAX_BYTES} bytes or 20,000 strings; nothing metered for either), sends its strings through the ` +
        'same path as POST /api/v1/translate (translation memory, one reservation for the file, validators, one ' +
        'retry), and returns the file in the same format with every key, placeholder and inline code, and the ' +
        'plural forms the target language needs (CLDR, Intl.PluralRules).',
      tags: ['translation'],
      security: 'apiKey',
      body: TranslateFileRequest,
      responses: {
        200: {
          description: 'the translated file (or, with dryRun, what the call would reserve)',
          schema: TranslateFileResult.or(DryRunResult),
          headers: rateLimitHeaders,
        },
        400: { ...r400, description: 'invalid request body, or a file that does not parse (with the line and reason)' },
        401: r401,
        402: r402,
        403: r403,
        413: { ...r413, description: `file larger than ${FILE_MAX_BYTES} bytes or with more than 20,000 strings` },
        429: r429,
        502: r502,
      },
    },
    { onRequest: file.onRequest, bodyLimit: FILE_BODY_LIMIT },
    async (request, reply) => {
      const answer = await translateFile(app, request.principal!, request.body, file.gate(request, reply));
      // A file answer of the memory is JSON already: sent as it is (the same object as the schema's).
      if (answer instanceof JsonAnswer) return reply.type('application/json; charset=utf-8').send(answer.json);
      return answer;
    },
  );
}
