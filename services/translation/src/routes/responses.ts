// Response specs shared by the routes (descriptions follow the document's tables).

import type { ResponseSpec } from '../http/route-spec.ts';
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
