// Authentication, deny-by-default: each protected route names its scheme as a hook; a missing or invalid credential
// is 401. Decorates the API-key resolver (`app.apiKeys`) and the hooks (`app.authenticate`).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { unauthorized } from '../errors.ts';
import { ApiKeyResolver, type Principal } from '../services/accounts.ts';
import { bearerToken, secretsEqual } from '../services/secrets.ts';

export interface Authenticators {
  /** `Authorization: Bearer <API_KEY>` → request.principal. */
  apiKey(request: FastifyRequest): Promise<void>;
  /** `Authorization: Bearer <WORKER_SECRET>`, compared in constant time. No secret configured: every call is 401. */
  workerSecret(request: FastifyRequest): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyResolver;
    authenticate: Authenticators;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

async function auth(app: FastifyInstance): Promise<void> {
  const { config } = app;
  const apiKeys = new ApiKeyResolver(app.database, config.apiKeyCacheTtlMs, config.apiKeyRevocationCheckMs);
  const secret = config.workerSecret;
  app.decorate('apiKeys', apiKeys);
  app.decorateRequest('principal', null);
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
  } satisfies Authenticators);
}

export default fp(auth, { name: 'auth', fastify: '5.x', dependencies: ['settings', 'database'] });
