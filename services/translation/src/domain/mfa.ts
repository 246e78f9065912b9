// MFA: TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps, one step of clock drift either way) with otplib. The secret
// is encrypted at rest (AES-256-GCM, key from MFA__ENCRYPTION_KEY); a code is accepted once (the last accepted time
// step is stored, and only a later one passes). Once enabled, issuing or revoking a key and privacy delete need a
// session that passed TOTP within the last 12 hours.
import { sql } from 'drizzle-orm';
import { generateSecret, generateURI, verify } from 'otplib';
import type { AppContext } from '../context.ts';
import type { User } from '../db/schema.ts';
import { AppError, badRequest, forbidden, unauthorized } from '../errors.ts';
import { decryptSecret, encryptSecret } from '../infra/secrets.ts';
import { markMfaVerified, type SessionUser } from '../infra/sessions.ts';
import { audit } from './audit.ts';
import type { Actor } from './orgs.ts';

export const TOTP_PERIOD_S = 30;
/** How long a passed TOTP check covers the sensitive actions. */
export const STEP_UP_MS = 12 * 3_600_000;
const SECRET_INFO = 'mfa-secret/v1';
export const MFA_ISSUER = 'Scriptorium';

const notConfigured = () => new AppError('unavailable', 503, 'MFA is not configured on this service');

function keyMaterial(ctx: AppContext): string {
  if (!ctx.config.mfaEncryptionKey) throw notConfigured();
  return ctx.config.mfaEncryptionKey;
}

type MfaRow = Pick<User, 'email' | 'mfaSecretEnc' | 'mfaEnabled' | 'mfaLastStep'>;

async function mfaRow(ctx: AppContext, userId: string): Promise<MfaRow> {
  const [row] = await ctx.database.query<MfaRow>(
    `SELECT email, mfa_secret_enc AS "mfaSecretEnc", mfa_enabled AS "mfaEnabled", mfa_last_step AS "mfaLastStep"
       FROM users WHERE id = $1`,
    [userId],
  );
  if (!row) throw unauthorized();
  return row;
}

/**
 * Starts enrollment: a new secret (shown once, stored encrypted) and its otpauth URI. MFA is enabled by the first
 * valid `verifyMfa`. Refused (409) once MFA is enabled.
 */
export async function enrollMfa(ctx: AppContext, actor: Actor): Promise<{ secret: string; otpauthUri: string }> {
  const material = keyMaterial(ctx);
  const user = await mfaRow(ctx, actor.userId);
  if (user.mfaEnabled) throw new AppError('conflict', 409, 'MFA is already enabled');
  const secret = generateSecret();
  await ctx.database.db.transaction(async (tx) => {
    await tx.execute(
      sql`UPDATE users SET mfa_secret_enc = ${encryptSecret(secret, material, SECRET_INFO)}, mfa_last_step = NULL WHERE id = ${actor.userId}`,
    );
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      action: 'mfa.enroll',
      target: actor.userId,
      requestId: actor.requestId ?? null,
    });
  });
  return { secret, otpauthUri: generateURI({ issuer: MFA_ISSUER, label: user.email, secret }) };
}

/**
 * Checks `code` against the enrolled secret: 400 before enrollment, 401 for a wrong or replayed code. A valid code
 * enables MFA (the first time) and starts this session's step-up window.
 */
export async function verifyMfa(
  ctx: AppContext,
  actor: Actor,
  session: SessionUser,
  code: string,
): Promise<{ enabled: true; verifiedAt: string }> {
  const material = keyMaterial(ctx);
  const user = await mfaRow(ctx, actor.userId);
  if (!user.mfaSecretEnc) throw badRequest('MFA is not enrolled: POST {"action": "enroll"} first');
  const now = ctx.now();
  const result = /^\d{6}$/.test(code)
    ? await verify({
        secret: decryptSecret(user.mfaSecretEnc, material, SECRET_INFO),
        token: code,
        epoch: Math.floor(now / 1000),
        epochTolerance: TOTP_PERIOD_S,
        ...(user.mfaLastStep !== null ? { afterTimeStep: user.mfaLastStep } : {}),
      })
    : { valid: false as const };
  // The step is recorded only if it is later than the last accepted one (two requests racing with one code: one wins).
  const accepted =
    result.valid &&
    (
      await ctx.database.query(
        `UPDATE users SET mfa_last_step = $2, mfa_enabled = true
          WHERE id = $1 AND (mfa_last_step IS NULL OR mfa_last_step < $2) RETURNING id`,
        [actor.userId, 'timeStep' in result ? result.timeStep : null],
      )
    ).length === 1;
  await audit(ctx.database.db, {
    actorUserId: actor.userId,
    actorKind: 'user',
    action: accepted ? (user.mfaEnabled ? 'mfa.verify' : 'mfa.enable') : 'mfa.failure',
    target: actor.userId,
    requestId: actor.requestId ?? null,
  });
  if (!accepted) throw unauthorized('invalid MFA code');
  await markMfaVerified(ctx.database, session.tokenHash, now);
  return { enabled: true, verifiedAt: new Date(now).toISOString() };
}

/** With MFA enabled, the session must have passed TOTP within the last 12 hours (403 otherwise). */
export function requireStepUp(ctx: AppContext, session: SessionUser): void {
  if (!session.mfaEnabled) return;
  const at = session.mfaVerifiedAt?.getTime();
  if (at === undefined || ctx.now() - at > STEP_UP_MS)
    throw forbidden('this action needs a TOTP check in the last 12 hours: POST /api/v1/mfa {"action": "verify"}');
}
