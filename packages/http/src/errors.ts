// The error a handler or hook throws to answer an HTTP error: a stable code, a status and a message safe to show.
// Each service's errors.ts builds its own on this class; the error plugin turns any of them into `{error: string}`.
import { z } from 'zod';

/** `{error: string}`: the body of every error answer of both services. */
export const ErrorBody = z.object({ error: z.string() });
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * An error that maps to an HTTP answer. `message` is what the client reads.
 * @example throw new HttpError('not_found', 404, 'no such block');
 */
export class HttpError extends Error {
  readonly code: string;
  readonly status: number;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers: Record<string, string>;
  /** Extra fields of the error body besides `error` (e.g. the validator issues of a 422). */
  readonly details: Record<string, unknown>;

  constructor(
    code: string,
    status: number,
    message: string,
    headers: Record<string, string> = {},
    details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = code;
    this.status = status;
    this.headers = headers;
    this.details = details;
  }
}
