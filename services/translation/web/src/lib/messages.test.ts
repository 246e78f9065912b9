import { describe, expect, it } from 'vitest';
import { ApiError, NETWORK_ERROR } from '../api/client.ts';
import { describeError, duration, isStepUp } from './messages.ts';

describe('duration', () => {
  it.each([
    [0.2, '1 second'],
    [1, '1 second'],
    [12, '12 seconds'],
    [60, '1 minute'],
    [61, '1 minute 1 second'],
    [3599, '59 minutes 59 seconds'],
  ])('%d → %s', (s, text) => expect(duration(s)).toBe(text));
});

describe('describeError', () => {
  it('explains the playground answers a visitor can get', () => {
    expect(describeError(new ApiError(413, 'source is longer than 500 characters'), 'playground')).toMatch(
      /at most 500 characters/,
    );
    expect(describeError(new ApiError(402, 'budget'), 'playground')).toMatch(/used up its budget for today/);
    expect(describeError(new ApiError(429, 'rate limit exceeded', 42), 'playground')).toBe(
      'Too many requests. Try again in 42 seconds.',
    );
    expect(describeError(new ApiError(429, 'rate limit exceeded'), 'playground')).toMatch(/Wait a little/);
  });

  it('tells a key that was refused from a session that ended', () => {
    expect(describeError(new ApiError(401, 'x'), 'translate')).toMatch(/API key was refused/);
    expect(describeError(new ApiError(401, 'x'), 'session')).toMatch(/signed out/);
  });

  it('keeps the service’s message for anything else', () => {
    expect(describeError(new ApiError(409, 'already decided'), 'session')).toBe(
      'That cannot be done now: already decided.',
    );
    expect(describeError(new ApiError(418, 'teapot'), 'session')).toBe('The service answered 418: teapot.');
    expect(describeError(new ApiError(NETWORK_ERROR, ''), 'session')).toMatch(/did not answer/);
    expect(describeError(new TypeError('x'), 'session')).toMatch(/Reload/);
  });
});

describe('isStepUp', () => {
  it('knows a refusal that asks for a fresh MFA code from a missing role', () => {
    expect(isStepUp(new ApiError(403, 'MFA step-up needed: verify a code'))).toBe(true);
    expect(isStepUp(new ApiError(401, 'this action needs a TOTP check in the last 12 hours'))).toBe(true);
    expect(isStepUp(new ApiError(403, 'not a member or insufficient role'))).toBe(false);
    expect(isStepUp(new ApiError(422, 'mfa'))).toBe(false);
    expect(describeError(new ApiError(401, 'bad code'), 'mfa')).toMatch(/not valid/);
  });
});
