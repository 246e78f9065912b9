// API keys through the session API: issue (the secret shown once), list (never the secret or its hash), revoke.
// Rotation: issue a new key, deploy it, revoke the old one (README).
import type { AppContext } from '../context.ts';
import type { ApiKey } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { ensurePersonalOrg, issueApiKey, revokeApiKey } from './accounts.ts';
import type { Actor } from './orgs.ts';
import { allows, type Role } from './role-table.ts';
import { authorize } from './roles.ts';

export type KeyView = Pick<
  ApiKey,
  'id' | 'prefix' | 'name' | 'orgId' | 'userId' | 'createdAt' | 'lastUsedAt' | 'revokedAt'
>;

/**
 * Issues a key for `orgId` (admin or above) or, without one, for the caller's personal organization.
 * @example const { apiKey, prefix } = await issueKey(app, actor, { orgId, name: 'ci' });
 */
export async function issueKey(
  ctx: AppContext,
  actor: Actor,
  input: { orgId?: string | undefined; name?: string | undefined },
): Promise<{ apiKey: string; prefix: string; keyId: string; orgId: string }> {
  let orgId = input.orgId;
  if (orgId) await authorize(ctx.database, orgId, actor.userId, 'keys.issue');
  else orgId = await ensurePersonalOrg(ctx.database, actor.userId, ctx.config.defaultPlan);
  return issueApiKey(ctx.database, {
    userId: actor.userId,
    orgId,
    defaultPlan: ctx.config.defaultPlan,
    actor: 'user',
    ...(input.name ? { name: input.name } : {}),
    ...(actor.requestId ? { requestId: actor.requestId } : {}),
  });
}

const KEY_COLUMNS = `k.id, k.prefix, k.name, k.org_id AS "orgId", k.user_id AS "userId", k.created_at AS "createdAt",
       k.last_used_at AS "lastUsedAt", k.revoked_at AS "revokedAt"`;

/**
 * The keys the caller may see: their own, and every key of the organizations where they are admin or above
 * (optionally of one organization only, which then needs membership).
 */
export async function listKeys(ctx: AppContext, actor: Actor, orgId?: string): Promise<KeyView[]> {
  if (orgId) await authorize(ctx.database, orgId, actor.userId, 'members.list');
  return ctx.database.query<KeyView>(
    `SELECT ${KEY_COLUMNS}
       FROM api_keys k LEFT JOIN memberships m ON m.org_id = k.org_id AND m.user_id = $1
      WHERE (k.user_id = $1 OR m.role IN ('admin', 'owner')) AND ($2::text IS NULL OR k.org_id = $2)
      ORDER BY k.created_at DESC, k.id`,
    [actor.userId, orgId ?? null],
  );
}

/**
 * Revokes a key the caller created, or any key of an organization where they are admin or above. A key they may not
 * see is 404, as an unknown one (the answer does not reveal it). Serving replicas refuse it within
 * API_KEY_REVOCATION_CHECK_MS; this one at once.
 */
export async function revokeKey(ctx: AppContext, actor: Actor, keyId: string): Promise<KeyView> {
  const [key] = await ctx.database.query<KeyView & { role: Role | null }>(
    `SELECT ${KEY_COLUMNS}, m.role
       FROM api_keys k LEFT JOIN memberships m ON m.org_id = k.org_id AND m.user_id = $2
      WHERE k.id = $1`,
    [keyId, actor.userId],
  );
  if (!key || (key.userId !== actor.userId && !(key.role && allows(key.role, 'keys.revoke'))))
    throw notFound('key not found');
  await revokeApiKey(
    ctx.database,
    { keyId, actor: 'user', actorUserId: actor.userId, ...(actor.requestId ? { requestId: actor.requestId } : {}) },
    ctx.apiKeys,
  );
  const [after] = await ctx.database.query<KeyView>(`SELECT ${KEY_COLUMNS} FROM api_keys k WHERE k.id = $1`, [keyId]);
  return after!;
}
