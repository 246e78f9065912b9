// Authentication hooks, deny-by-default: each protected route names its scheme; a missing or invalid credential is 401.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from '../errors.ts';
import type { Principal } from '../services/accounts.ts';
import type { AppContext } from '../services/context.ts';
import { bearerToken, secretsEqual } from '../services/secrets.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** `Authorization: Bearer <API_KEY>` → request.principal. */
export function apiKeyAuth(ctx: AppContext) {
  return async (request: FastifyRequest): Promise<void> => {
    const token = bearerToken(request.headers.authorization);
    const principal = token ? await ctx.keys.resolve(token) : null;
    if (!principal) throw unauthorized();
    request.principal = principal;
  };
}

/** `Authorization: Bearer <WORKER_SECRET>`, compared in constant time. No secret configured: every call is 401. */
export function workerSecretAuth(ctx: AppContext) {
  const secret = ctx.config.workerSecret;
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request.headers.authorization);
    // Compare even when the token is missing, so timing does not tell the cases apart.
    const ok = secretsEqual(token ?? '', secret ?? '') && token !== null && secret !== undefined;
    if (!ok) throw unauthorized();
  };
}
