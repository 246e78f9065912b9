// Bearer cluster token, compared in constant time over SHA-256 digests (equal lengths).
import { createHash, timingSafeEqual } from 'node:crypto';

export interface TokenCheck {
  /** True when no token is configured, or the header carries the right one. */
  check(authorization: string | undefined): boolean;
  readonly configured: boolean;
}

export function createTokenCheck(token: string | undefined): TokenCheck {
  if (token === undefined) return { configured: false, check: () => true };
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return {
    configured: true,
    check(authorization) {
      if (typeof authorization !== 'string' || !authorization.startsWith('Bearer ')) return false;
      const given = createHash('sha256').update(authorization.slice(7), 'utf8').digest();
      return timingSafeEqual(given, expected);
    },
  };
}
