// GET /api/v1/me — the signed-in user, their organizations and roles (registered with that prefix).

import { route } from '@scriptorium/http';
import type { FastifyInstance } from 'fastify';
import { listOrgs } from '../../../domain/orgs.ts';
import { Me } from '../../../http/schemas.ts';
import { actorOf, r401, r429, rateLimitHeaders, sessionHooks } from '../../responses.ts';

export default async function meRoutes(app: FastifyInstance): Promise<void> {
  route(
    app,
    {
      method: 'GET',
      url: '',
      operationId: 'me',
      summary: 'The signed-in user, with their organizations and roles',
      tags: ['session'],
      security: 'session',
      responses: {
        200: { description: 'the user', schema: Me, headers: rateLimitHeaders },
        401: r401,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, app.prefix, 240) },
    async (request) => {
      const actor = actorOf(request);
      const [user] = await app.database.query<{ id: string; email: string; name: string | null }>(
        'SELECT id, email, name FROM users WHERE id = $1',
        [actor.userId],
      );
      return {
        ...user!,
        mfaEnabled: request.sessionUser!.mfaEnabled,
        mfaVerifiedAt: request.sessionUser!.mfaVerifiedAt,
        organizations: await listOrgs(app, actor),
      };
    },
  );
}
