// Rate limits: the window store (PostgreSQL, shared by replicas; in memory on PGlite) and the hooks that count a
// request per route and per key, session or IP. Limited routes carry RateLimitRemaining; a refusal is 429 with
// Retry-After.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { LimitRule, RateLimits } from '../context.ts';
import { rateLimited } from '../errors.ts';
import { createRateLimits, MemoryRateLimitStore, PostgresRateLimitStore } from '../infra/rate-limiter.ts';

export interface AppRateLimits extends RateLimits {
  /** An onRequest/preHandler hook counting the request of `who(request)` in every rule's bucket. */
  hook(
    route: string,
    rules: LimitRule[],
    who: (request: FastifyRequest) => string,
  ): (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimits: AppRateLimits;
  }
}

async function rateLimit(app: FastifyInstance): Promise<void> {
  const { store } = app.config.rateLimits;
  const limits = createRateLimits({
    store:
      store === 'memory' || (store === 'auto' && app.database.kind === 'pglite')
        ? new MemoryRateLimitStore()
        : new PostgresRateLimitStore(app.database),
    perMinute: app.config.rateLimits.perMinute,
    now: app.now,
  });
  app.decorate('rateLimits', {
    ...limits,
    hook: (route, rules, who) => async (request, reply) => {
      const { remaining, retryAfterSeconds } = await limits.check(rules, who(request));
      reply.header('RateLimitRemaining', String(remaining));
      if (retryAfterSeconds > 0) {
        app.metrics.rateLimited.inc({ route });
        throw rateLimited(retryAfterSeconds);
      }
    },
  } satisfies AppRateLimits);
}

export default fp(rateLimit, {
  name: 'rate-limits',
  fastify: '5.x',
  dependencies: ['settings', 'database', 'observability'],
});
