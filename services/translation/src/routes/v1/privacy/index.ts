// Data-subject rights (LGPD), registered under /api/v1/privacy: export (a JSON attachment) and delete (erasure by
// plan: transfer, delete or scrub; the audit trail kept under a pseudonymous subject).

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { requireStepUp } from '../../../domain/mfa.ts';
import { eraseAccount, exportData } from '../../../domain/privacy.ts';
import { PrivacyDeleteResult } from '../../../http/schemas.ts';
import { SESSION_COOKIE } from '../../../infra/sessions.ts';
import { actorOf, r401, r403, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function privacyRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'POST',
      url: '/export',
      operationId: 'privacyExport',
      summary: 'Export everything the service holds about you (a JSON attachment)',
      description:
        'Profile, memberships, API keys’ metadata, sessions’ times, invites sent and received, usage of your keys per ' +
        'day and model, review decisions, and the audit entries by or about you — never API-key hashes, session ' +
        'hashes or the MFA secret.',
      tags: ['privacy'],
      security: 'session',
      bodyRequired: false,
      responses: {
        200: {
          description: 'the bundle, as an attachment (Content-Disposition)',
          schema: z.record(z.string(), z.unknown()),
          headers: {
            'Content-Disposition': { description: 'attachment; filename=…', schema: { type: 'string' } },
            ...rateLimitHeaders,
          },
        },
        401: r401,
        403: r403,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/export`, 6) },
    async (request, reply) => {
      const bundle = await exportData(app, actorOf(request));
      return reply
        .header('content-disposition', `attachment; filename="scriptorium-export-${request.sessionUser!.userId}.json"`)
        .header('cache-control', 'no-store')
        .send(bundle);
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/delete',
      operationId: 'privacyDelete',
      summary: 'Erase your account (by plan: transfer, delete or scrub; the audit trail kept pseudonymously)',
      description:
        'Organizations you own alone pass to their longest-standing admin (else member); those with nobody else, and ' +
        'your personal one, are deleted; billing records of deleted organizations are pseudonymized; your sessions ' +
        'and keys end at once. With MFA enabled this needs a TOTP check in the last 12 hours.',
      tags: ['privacy'],
      security: 'session',
      bodyRequired: false,
      responses: {
        200: { description: 'deleted and plan', schema: PrivacyDeleteResult, headers: rateLimitHeaders },
        401: r401,
        403: { ...r403, description: 'cross-origin request refused, or MFA step-up needed' },
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/delete`, 6) },
    async (request, reply) => {
      requireStepUp(app, request.sessionUser!);
      const result = await eraseAccount(app, actorOf(request));
      reply.clearCookie(SESSION_COOKIE, { path: '/' });
      return result;
    },
  );
}
