// API keys through the session API (registered under /api/v1/keys): issue, list, revoke. With MFA enabled, issuing
// and revoking need a TOTP check in the last 12 hours.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { issueKey, listKeys, revokeKey } from '../../../domain/keys.ts';
import { requireStepUp } from '../../../domain/mfa.ts';
import { ApiKeyView, IdParams, KeyIssued, KeyIssueRequest, KeyList, KeyListQuery } from '../../../http/schemas.ts';
import { actorOf, r400, r401, r403, r404, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function keyRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'POST',
      url: '',
      operationId: 'issueKey',
      summary: 'Issue an API key (the secret is returned once)',
      description:
        'With `orgId`: a key of that organization (admin or above). Without: a key of the caller’s personal ' +
        'organization. Rotation: issue a new key, deploy it, then revoke the old one.',
      tags: ['keys'],
      security: 'session',
      body: KeyIssueRequest,
      bodyRequired: false,
      responses: {
        200: { description: '{apiKey, prefix}', schema: KeyIssued, headers: rateLimitHeaders },
        400: r400,
        401: r401,
        403: {
          ...r403,
          description:
            'not a member or lacks the role (does not disclose whether the organization exists), or MFA step-up needed',
        },
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, app.prefix, 30) },
    async (request) => {
      requireStepUp(app, request.sessionUser!);
      return issueKey(app, actorOf(request), request.body ?? {});
    },
  );

  route(
    app,
    {
      method: 'GET',
      url: '',
      operationId: 'listKeys',
      summary: 'The keys the caller may see (their own; all of the organizations they administer)',
      description: 'Prefix, name, organization, issuer, created, last used, revoked — never the secret or its hash.',
      tags: ['keys'],
      security: 'session',
      querystring: KeyListQuery,
      responses: {
        200: { description: 'keys', schema: KeyList, headers: rateLimitHeaders },
        401: r401,
        403: r403,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, app.prefix, 120) },
    async (request) => ({ keys: await listKeys(app, actorOf(request), request.query.orgId) }),
  );

  route(
    app,
    {
      method: 'DELETE',
      url: '/:id',
      operationId: 'revokeKey',
      summary: 'Revoke a key (your own, or any of an organization you administer)',
      description: 'This replica refuses the key at once, the others within API_KEY_REVOCATION_CHECK_MS (1 s).',
      tags: ['keys'],
      security: 'session',
      params: IdParams,
      responses: {
        200: { description: 'the revoked key', schema: ApiKeyView, headers: rateLimitHeaders },
        401: r401,
        403: { ...r403, description: 'MFA step-up needed' },
        404: r404,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/:id`, 30) },
    async (request) => {
      requireStepUp(app, request.sessionUser!);
      return revokeKey(app, actorOf(request), request.params.id);
    },
  );
}
