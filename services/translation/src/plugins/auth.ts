// Authentication, deny-by-default: each protected route names its scheme as a hook; a missing or invalid credential
// is 401. Decorates the API-key resolver (`app.apiKeys`) and the hooks (`app.authenticate`).
//
// Sessions: the `session-token` cookie (sessions.ts). An API key is never a session. CSRF: the cookie is
// SameSite=Lax, so a cross-site request carries no session except on top-level GET navigations (which change
// nothing); and every state-changing request with a session must come from the service's own origin — its `Origin`
// header (or, without one, its `Referer`) must be PUBLIC_BASE_URL's origin; a request with neither (curl, scripts:
// no browser, no ambient cookie risk) is let through. Bodies are JSON only, which a cross-site HTML form cannot send.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Principal } from '../context.ts';
import { ApiKeyResolver } from '../domain/accounts.ts';
import { forbidden, unauthorized } from '../errors.ts';
import { bearerToken, secretsEqual } from '../infra/secrets.ts';
import { resolveSession, SESSION_COOKIE, type SessionUser } from '../infra/sessions.ts';

export interface Authenticators {
  /** `Authorization: Bearer <API_KEY>` → request.principal. */
  apiKey(request: FastifyRequest): Promise<void>;
  /** `Authorization: Bearer <WORKER_SECRET>`, compared in constant time. No secret configured: every call is 401. */
  workerSecret(request: FastifyRequest): Promise<void>;
  /** The `session-token` cookie → request.sessionUser; 401 without a valid session (or when sign-in is disabled). */
  session(request: FastifyRequest): Promise<void>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a state-changing request may use its session: it comes from `origin`, or from no browser at all. */
export function sameOrigin(request: FastifyRequest, origin: string): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  const from = request.headers.origin ?? request.headers.referer;
  if (from === undefined) return true;
  try {
    return new URL(from).origin === origin;
  } catch {
    return false;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyResolver;
    authenticate: Authenticators;
  }
  interface FastifyRequest {
    principal: Principal | null;
    sessionUser: SessionUser | null;
  }
}

async function auth(app: FastifyInstance): Promise<void> {
  const { config } = app;
  const apiKeys = new ApiKeyResolver(app.database, config.apiKeyCacheTtlMs, config.apiKeyRevocationCheckMs);
  const secret = config.workerSecret;
  app.decorate('apiKeys', apiKeys);
  app.decorateRequest('principal', null);
  app.decorateRequest('sessionUser', null);
  const origin = new URL(config.publicBaseUrl).origin;
  app.decorate('authenticate', {
    async apiKey(request) {
      const token = bearerToken(request.headers.authorization);
      const principal = token ? await apiKeys.resolve(token) : null;
      if (!principal) throw unauthorized();
      request.principal = principal;
    },
    async workerSecret(request) {
      const token = bearerToken(request.headers.authorization);
      // Compare even when the token is missing, so timing does not tell the cases apart.
      const ok = secretsEqual(token ?? '', secret ?? '') && token !== null && secret !== undefined;
      if (!ok) throw unauthorized();
    },
    async session(request) {
      const user = config.oauth
        ? await resolveSession(app.database, request.cookies[SESSION_COOKIE], app.now(), config.session)
        : null;
      if (!user) throw unauthorized();
      if (!sameOrigin(request, origin)) throw forbidden('cross-origin request refused');
      request.sessionUser = user;
    },
  } satisfies Authenticators);
}

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['settings', 'database', '@fastify/cookie'] });
