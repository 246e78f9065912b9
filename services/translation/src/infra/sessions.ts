// Sessions: the `session-token` cookie is an opaque 256-bit random token; only its SHA-256 is stored. A session ends
// at its absolute expiry (SESSION__ABSOLUTE_HOURS after sign-in) or when idle for SESSION__IDLE_MINUTES, whichever
// comes first; sign-out, erasure and a deleted user end it at once.
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/index.ts';
import type { Session, User } from '../db/schema.ts';
import { sha256 } from './secrets.ts';

export const SESSION_COOKIE = 'session-token';
/** How often a used session's `last_seen_at` is written (idle expiry has this resolution). */
const TOUCH_EVERY_MS = 60_000;

export interface SessionTimes {
  absoluteMs: number;
  idleMs: number;
}

/** The signed-in caller of a session route. */
export type SessionUser = Pick<Session, 'userId' | 'mfaVerifiedAt'> &
  Pick<User, 'mfaEnabled'> & {
    /** SHA-256 of the cookie: identifies the session without holding the token. */
    tokenHash: Buffer;
  };

const looksLikeToken = (value: string) => /^[A-Za-z0-9_-]{43}$/.test(value);

/**
 * Starts a session for `userId`; returns the cookie value (shown to the client once, never stored) and its expiry.
 * @example const { token, expiresAt } = await createSession(database, userId, Date.now(), times);
 */
export async function createSession(
  database: Database,
  userId: string,
  now: number,
  times: SessionTimes,
): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now + times.absoluteMs);
  await database.query(
    'INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen_at) VALUES ($1, $2, $3, $4, $3)',
    [sha256(token), userId, new Date(now).toISOString(), expiresAt.toISOString()],
  );
  return { token, expiresAt };
}

const RESOLVE_SQL = `
SELECT s.user_id AS "userId", s.mfa_verified_at AS "mfaVerifiedAt", s.last_seen_at AS "lastSeenAt",
       u.mfa_enabled AS "mfaEnabled"
  FROM sessions s JOIN users u ON u.id = s.user_id
 WHERE s.token_hash = $1 AND s.expires_at > $2 AND s.last_seen_at > $3 AND u.deleted_at IS NULL`;

/**
 * The session of cookie value `token`, or null (unknown, expired, idle too long, or its user deleted). A used session's
 * idle clock is reset, at most once a minute.
 */
export async function resolveSession(
  database: Database,
  token: string | undefined,
  now: number,
  times: SessionTimes,
): Promise<SessionUser | null> {
  if (!token || !looksLikeToken(token)) return null;
  const tokenHash = sha256(token);
  const [row] = await database.query<SessionUser & { lastSeenAt: Date }>(
    RESOLVE_SQL,
    [tokenHash, new Date(now).toISOString(), new Date(now - times.idleMs).toISOString()],
    'session_resolve',
  );
  if (!row) return null;
  if (now - new Date(row.lastSeenAt).getTime() >= TOUCH_EVERY_MS) {
    await database.query('UPDATE sessions SET last_seen_at = $2 WHERE token_hash = $1', [
      tokenHash,
      new Date(now).toISOString(),
    ]);
  }
  return {
    userId: row.userId,
    mfaVerifiedAt: row.mfaVerifiedAt ? new Date(row.mfaVerifiedAt) : null,
    mfaEnabled: row.mfaEnabled,
    tokenHash,
  };
}

/** Ends the session (sign-out). */
export async function endSession(database: Database, tokenHash: Buffer): Promise<void> {
  await database.query('DELETE FROM sessions WHERE token_hash = $1', [tokenHash]);
}

/** Records that this session passed TOTP now (the 12-hour step-up window starts). */
export async function markMfaVerified(database: Database, tokenHash: Buffer, now: number): Promise<void> {
  await database.query('UPDATE sessions SET mfa_verified_at = $2 WHERE token_hash = $1', [
    tokenHash,
    new Date(now).toISOString(),
  ]);
}
