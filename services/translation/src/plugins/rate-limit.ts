// Rate-limit hooks: per route and per key (per IP on public routes). Limited routes carry RateLimitRemaining;
// a refusal is 429 with Retry-After in whole seconds.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { rateLimited } from '../errors.ts';
import type { AppContext } from '../services/context.ts';
import { checkRateLimit } from '../services/rate-limiter.ts';

export interface LimitRule {
  /** Bucket name prefix, e.g. `translate:key` */
  name: string;
  limit: number;
  windowMs: number;
}

/**
 * A hook that counts the request in every rule's bucket for `who(request)`; the tightest remaining count is
 * reported in RateLimitRemaining.
 */
export function rateLimit(
  ctx: AppContext,
  route: string,
  rules: LimitRule[],
  who: (request: FastifyRequest) => string,
) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const subject = who(request);
    const now = ctx.now();
    let remaining = Number.POSITIVE_INFINITY;
    let refusedFor = 0;
    for (const rule of rules) {
      const d = await checkRateLimit(ctx.rateLimits, `${rule.name}:${subject}`, rule.limit, rule.windowMs, now);
      remaining = Math.min(remaining, d.remaining);
      if (!d.allowed) refusedFor = Math.max(refusedFor, d.retryAfterSeconds);
    }
    reply.header('RateLimitRemaining', String(remaining));
    if (refusedFor > 0) {
      ctx.metrics.rateLimited.inc({ route });
      throw rateLimited(refusedFor);
    }
  };
}
