// Readable sentences for the service's error answers, by what the person was doing. The service's own `{error}`
// text is kept as the detail; the sentence says what happened and what to do.

import { PLAYGROUND_MAX_CHARS } from '../../../src/http/limits.ts';
import { ApiError, NETWORK_ERROR } from '../api/client.ts';

export type Action = 'playground' | 'translate' | 'session' | 'mfa';

/** `n seconds` / `1 minute 5 seconds`. */
export function duration(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const m = Math.floor(s / 60);
  const rest = s % 60;
  const part = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (m === 0) return part(rest, 'second');
  return rest === 0 ? part(m, 'minute') : `${part(m, 'minute')} ${part(rest, 'second')}`;
}

/**
 * The sentence to show for an error of `action`.
 * @example describeError(new ApiError(429, 'rate limit exceeded', 12), 'playground') // 'Too many requests …12 seconds.'
 */
export function describeError(error: unknown, action: Action): string {
  if (!(error instanceof ApiError)) return 'Something went wrong in the page. Reload it and try again.';
  const detail = error.message;
  switch (error.status) {
    case NETWORK_ERROR:
      return 'The service did not answer. Check your connection and try again.';
    case 413:
      return `The text is too long: the playground takes at most ${PLAYGROUND_MAX_CHARS} characters. Shorten it and try again.`;
    case 402:
      return action === 'playground'
        ? 'The playground has used up its budget for today. Try again tomorrow, or sign in and translate with your own key.'
        : `Your organization has reached its plan quota or daily budget cap (${detail}). See Usage for the limits.`;
    case 429:
      return error.retryAfter
        ? `Too many requests. Try again in ${duration(error.retryAfter)}.`
        : 'Too many requests. Wait a little and try again.';
    case 401:
      if (action === 'translate') return 'The API key was refused: it is wrong or has been revoked.';
      if (action === 'mfa') return 'That code is not valid (or was already used). Wait for the next one and try again.';
      return 'You are signed out. Sign in again to continue.';
    case 403:
      return isStepUp(error)
        ? 'This needs a fresh check of your second factor.'
        : 'You do not have the role this needs in the organization.';
    case 400:
      return action === 'mfa' ? `The service refused the request: ${detail}.` : `The request was refused: ${detail}.`;
    case 409:
      return `That cannot be done now: ${detail}.`;
    case 502:
      return 'The translation provider failed to answer. Try again in a moment.';
    default:
      return `The service answered ${error.status}: ${detail}.`;
  }
}

/** Whether the service refused because the session needs a fresh MFA check (step-up). */
export const isStepUp = (error: unknown): boolean =>
  error instanceof ApiError &&
  (error.status === 401 || error.status === 403) &&
  /\bmfa\b|step-up|totp/i.test(error.message);
