// Response specs shared by the routes (descriptions follow the document's tables).

import type { ResponseSpec } from '@scriptorium/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody } from '../http/schemas.ts';

const error = (description: string): ResponseSpec => ({ description, schema: ErrorBody });
const remaining = {
  RateLimitRemaining: {
    description: 'requests left in the current rate-limit window',
    schema: { type: 'integer' as const },
  },
};

export const r400 = error('invalid request body');
export const r401 = error('missing or invalid credentials');
export const r402 = error('plan quota or daily budget cap reached');
export const r403 = error('not a member or insufficient role (does not disclose whether the resource exists)');
export const r404 = error('not found (also for what the caller may not see: its existence is not disclosed)');
export const r409 = error('conflicts with the current state (e.g. an already decided review item)');
export const r413 = error('playground input too long');
export const r429: ResponseSpec = {
  description: 'rate limit exceeded',
  schema: ErrorBody,
  headers: {
    'Retry-After': { description: 'integer seconds until the rate-limit window frees up', schema: { type: 'integer' } },
    ...remaining,
  },
};
export const r502 = error('upstream provider error');
export const rateLimitHeaders = remaining;

/** The session routes' hooks: the session (401 without one), then a per-user rate limit named after the route. */
export function sessionHooks(
  app: FastifyInstance,
  route: string,
  perMinute: number,
): ((request: FastifyRequest, reply: FastifyReply) => Promise<void>)[] {
  const limit = app.rateLimits.perMinute(route, perMinute);
  return [
    app.authenticate.session,
    app.rateLimits.hook(
      route,
      [{ name: `session:${route}`, limit, windowMs: 60_000 }],
      (req) => req.sessionUser!.userId,
    ),
  ];
}

/** Who acts in a session request (for the service functions and the audit log). */
export const actorOf = (request: FastifyRequest) => ({ userId: request.sessionUser!.userId, requestId: request.id });
