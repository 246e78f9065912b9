// POST /api/v1/judge (registered with that prefix).

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { meteredJudge } from '../../../domain/judging.ts';
import { orgSubject } from '../../../domain/metering.ts';
import { JudgeRequest, JudgeResponse } from '../../../http/schemas.ts';
import { r400, r401, r429, rateLimitHeaders } from '../../responses.ts';

export default async function judgeRoutes(app: FastifyInstance): Promise<void> {
  const url = app.prefix;
  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'judge',
      summary: 'Score translations from 0 to 5 per dimension',
      description:
        'GEMBA-MQM-style LLM judge, metered like a translation. When the budget is reached or the upstream fails, ' +
        'the validator-based heuristic judge answers instead (`judge: "heuristic"`).',
      tags: ['translation'],
      security: 'apiKey',
      body: JudgeRequest,
      responses: {
        200: { description: 'scores', schema: JudgeResponse, headers: rateLimitHeaders },
        400: r400,
        401: r401,
        429: r429,
      },
    },
    {
      onRequest: [
        app.authenticate.apiKey,
        app.rateLimits.hook(
          url,
          [{ name: 'judge:key', limit: app.rateLimits.perMinute(url, 120), windowMs: 60_000 }],
          (req) => req.principal!.keyId,
        ),
      ],
    },
    async (request) => {
      const principal = request.principal!;
      const b = request.body;
      const result = await meteredJudge(app, orgSubject(principal), principal.keyId, 'judge', {
        sourceLocale: b.sourceLocale,
        targetLocale: b.targetLocale,
        items: b.items,
        glossary: b.glossary,
        ...(b.style ? { style: b.style } : {}),
        model: app.config.models.judge,
      });
      return {
        scores: result.scores,
        overall: result.overall,
        judge: result.judge,
        model: result.model,
        issues: result.issues,
        tokensIn: result.tokensIn,
        tokensOut: result.tokensOut,
      };
    },
  );
}
