// GitHub sign-in and sign-out (registered under /auth): GET /auth/github starts the flow, GET /auth/github/callback
// finishes it (the `session-token` cookie), POST /auth/logout ends the session.

import { route } from '@scriptorium/http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { audit } from '../../domain/audit.ts';
import { signInWithGitHub } from '../../domain/identity.ts';
import { SignedOut } from '../../http/schemas.ts';
import { createSession, endSession, SESSION_COOKIE } from '../../infra/sessions.ts';
import { r401, r403, r429, rateLimitHeaders, sessionHooks } from '../responses.ts';

const redirect = (description: string) => ({
  description,
  headers: {
    Location: { description: 'where the browser goes next', schema: { type: 'string' as const } },
    ...rateLimitHeaders,
  },
});
const disabled = {
  description: 'sign-in is not configured (no OAuth client)',
  schema: z.object({ error: z.string() }),
};

export default async function authRoutes(app: FastifyInstance): Promise<void> {
  const secure = app.config.environment !== 'development';
  // Per client IP: the flow's two steps and the token exchange behind the callback.
  const limit = (path: string) => {
    const url = `${app.prefix}${path}`;
    return app.rateLimits.hook(
      url,
      [{ name: `auth:ip:${path}`, limit: app.rateLimits.perMinute(url, 30), windowMs: 60_000 }],
      (req) => req.ip,
    );
  };
  const setSessionCookie = (reply: FastifyReply, token: string, expiresAt: Date) =>
    reply.setCookie(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure,
      path: '/',
      expires: expiresAt,
    });

  route(
    app,
    {
      method: 'GET',
      url: '/github',
      operationId: 'signInStart',
      summary: 'Start GitHub sign-in',
      description:
        'Redirects to the identity provider’s authorize endpoint with `state` and a PKCE S256 challenge (both bound ' +
        'to this browser by short-lived HttpOnly cookies).',
      tags: ['session'],
      security: 'none',
      responses: { 302: redirect('to the provider'), 429: r429, 503: disabled },
    },
    { onRequest: limit('/github') },
    async (request, reply) => reply.redirect(await app.signIn.authorizationUri(request, reply)),
  );

  route(
    app,
    {
      method: 'GET',
      url: '/github/callback',
      operationId: 'signInCallback',
      summary: 'Finish GitHub sign-in',
      description:
        'Checks `state`, exchanges the code with the PKCE verifier, reads the account (`/user`, the verified primary ' +
        'e-mail from `/user/emails`), creates or links the user by GitHub id, sets the `session-token` cookie ' +
        '(HttpOnly, SameSite=Lax, Secure outside development) and redirects to `/`.',
      tags: ['session'],
      security: 'none',
      querystring: z.object({
        code: z.string().max(512).optional(),
        state: z.string().max(512).optional(),
        error: z.string().max(256).optional(),
      }),
      responses: { 302: redirect('to the app, signed in'), 401: r401, 429: r429, 503: disabled },
    },
    { onRequest: limit('/github/callback') },
    async (request, reply) => {
      const accessToken = await app.signIn.accessToken(request, reply);
      const { userId } = await signInWithGitHub(app, accessToken, request.id);
      const { token, expiresAt } = await createSession(app.database, userId, app.now(), app.config.session);
      setSessionCookie(reply, token, expiresAt);
      return reply.redirect('/');
    },
  );

  route(
    app,
    {
      method: 'POST',
      url: '/logout',
      operationId: 'signOut',
      summary: 'Sign out: end the session',
      tags: ['session'],
      security: 'session',
      bodyRequired: false,
      responses: {
        200: { description: 'signed out; the cookie is cleared', schema: SignedOut, headers: rateLimitHeaders },
        401: r401,
        403: r403,
        429: r429,
      },
    },
    { onRequest: sessionHooks(app, `${app.prefix}/logout`, 60) },
    async (request, reply) => {
      const session = request.sessionUser!;
      await endSession(app.database, session.tokenHash);
      await audit(app.database.db, {
        actorUserId: session.userId,
        actorKind: 'user',
        action: 'session.sign_out',
        target: session.userId,
        requestId: request.id,
      });
      reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure });
      return { signedOut: true as const };
    },
  );
}
