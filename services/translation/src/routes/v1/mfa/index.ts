// POST /api/v1/mfa — TOTP enrollment and verification (registered with that prefix).

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { enrollMfa, verifyMfa } from '../../../domain/mfa.ts';
import { badRequest } from '../../../errors.ts';
import { MfaRequest, MfaResult } from '../../../http/schemas.ts';
import { actorOf, r400, r401, r403, r409, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function mfaRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'mfa',
      summary: 'Enroll in TOTP MFA, or verify a code',
      description:
        '`enroll` returns a new secret and its `otpauthUri` (MFA is enabled by the first valid `verify`). `verify` with ' +
        'the current code enables MFA and starts the session’s 12-hour step-up window (needed to issue or revoke a key ' +
        'and for privacy delete once MFA is on). Verify before enrolling, or an unknown action: 400. A wrong or replayed ' +
        'code: 401. Limited to 10 requests a minute per user.',
      tags: ['session'],
      security: 'session',
      body: MfaRequest,
      responses: {
        200: {
          description: 'enroll: {secret, otpauthUri}; verify: {enabled, verifiedAt}',
          schema: MfaResult,
          headers: rateLimitHeaders,
        },
        400: r400,
        401: { ...r401, description: 'missing or invalid credentials, or an invalid MFA code' },
        403: r403,
        409: { ...r409, description: 'MFA is already enabled (enroll)' },
        429: r429,
        503: { description: 'MFA is not configured (no MFA__ENCRYPTION_KEY)', schema: z.object({ error: z.string() }) },
      },
    },
    { onRequest: sessionHooks(app, app.prefix, 10) },
    async (request) => {
      const body = request.body;
      if (body.action === 'enroll') return enrollMfa(app, actorOf(request));
      if (!body.code) throw badRequest('body.code: required for verify');
      return verifyMfa(app, actorOf(request), request.sessionUser!, body.code);
    },
  );
}
