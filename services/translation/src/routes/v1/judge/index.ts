import type { FastifyInstance } from 'fastify';
import { type RouteRegistry, route } from '../../../http/route-spec.ts';
import { apiKeyAuth } from '../../../plugins/auth.ts';
import { rateLimit } from '../../../plugins/rate-limit.ts';
import { JudgeRequest, JudgeResponse } from '../../../schemas.ts';
import type { AppContext } from '../../../services/context.ts';
import { meteredJudge } from '../../../services/judging.ts';
import { orgSubject } from '../../../services/meter.ts';
import { r400, r401, r429, rateLimitHeaders } from '../../responses.ts';

export function judgeRoutes(app: FastifyInstance, registry: RouteRegistry, ctx: AppContext): void {
  const url = '/api/v1/judge';
  route(
    app,
    registry,
    {
      method: 'POST',
      url,
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
        apiKeyAuth(ctx),
        rateLimit(
          ctx,
          url,
          [{ name: 'judge:key', limit: ctx.config.rateLimits.perMinute[url] ?? 120, windowMs: 60_000 }],
          (req) => req.principal!.keyId,
        ),
      ],
    },
    async (request) => {
      const principal = request.principal!;
      const b = request.body;
      const result = await meteredJudge(ctx, orgSubject(principal), principal.keyId, 'judge', {
        sourceLocale: b.sourceLocale,
        targetLocale: b.targetLocale,
        items: b.items,
        glossary: b.glossary,
        ...(b.style ? { style: b.style } : {}),
        model: ctx.config.models.judge,
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
