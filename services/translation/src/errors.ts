// Every error the service answers with: a stable code, an HTTP status and a message. Bodies are `{error: string}`.
import { HttpError } from '@scriptorium/http';

/** An error that maps to an HTTP answer (the shared error plugin answers it). `message` is safe to show to the client. */
export class AppError extends HttpError {
  constructor(
    code: string,
    status: number,
    message: string,
    headers: Record<string, string> = {},
    details: Record<string, unknown> = {},
  ) {
    super(code, status, message, headers, details);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string) => new AppError('bad_request', 400, message);
export const unauthorized = (message = 'missing or invalid credentials') => new AppError('unauthorized', 401, message);
/** A sign-in that cannot complete: the OAuth exchange failed, or the identity provider did not answer as documented. */
export const signInFailed = (message = 'sign-in failed') => new AppError('sign_in_failed', 401, message);
export const quotaExceeded = () => new AppError('quota_exceeded', 402, 'plan quota reached');
export const budgetExceeded = () => new AppError('budget_exceeded', 402, 'daily budget cap reached');
export const playgroundBudgetExceeded = () =>
  new AppError('playground_budget_exceeded', 402, 'the playground daily budget is spent; try again tomorrow');
/** Deny without disclosing whether the resource exists. */
export const forbidden = (message = 'forbidden') => new AppError('forbidden', 403, message);
export const notFound = (message = 'not found') => new AppError('not_found', 404, message);
export const conflict = (message: string) => new AppError('conflict', 409, message);
export const payloadTooLarge = (message: string) => new AppError('payload_too_large', 413, message);
export const unsupportedMediaType = () =>
  new AppError('unsupported_media_type', 415, 'unsupported content type: send application/json');
export const rateLimited = (retryAfterSeconds: number) =>
  new AppError('rate_limited', 429, 'rate limit exceeded', { 'retry-after': String(retryAfterSeconds) });
export const upstreamFailed = () => new AppError('upstream_error', 502, 'upstream provider error');
export const unavailable = (message: string) => new AppError('unavailable', 503, message);
export const internal = () => new AppError('internal', 500, 'internal error');

/** A configuration problem found at start: one line naming the variable. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
