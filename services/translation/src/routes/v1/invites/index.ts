// POST /api/v1/invites/accept — the invitee accepts (registered under /api/v1/invites). The invite link the inviter
// sends is `<PUBLIC_BASE_URL>/?invite=<token>`: the web app posts its token here once the invitee is signed in.

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { acceptInvite } from '../../../domain/orgs.ts';
import { AcceptInvite, Organization } from '../../../http/schemas.ts';
import { actorOf, r400, r401, r403, r404, r409, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function inviteRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'POST',
      url: '/accept',
      operationId: 'acceptInvite',
      summary: 'Accept an invite (the signed-in user’s e-mail must be the invited one)',
      tags: ['organizations'],
      security: 'session',
      body: AcceptInvite,
      responses: {
        200: { description: 'the organization joined, with the role', schema: Organization, headers: rateLimitHeaders },
        400: r400,
        401: r401,
        403: { ...r403, description: 'the invite was sent to another e-mail address' },
        404: { ...r404, description: 'unknown, expired or already used invite' },
        409: { ...r409, description: 'already a member' },
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/accept`, 30) },
    async (request) => acceptInvite(app, actorOf(request), request.body.token),
  );
}
