// Data-subject rights (LGPD): export everything the service holds about the caller, and erase it.
//
// Erasure plan, in one transaction:
// - each organization the caller owns alone: with other members it passes to the longest-standing admin (else the
//   longest-standing member); without, it is deleted (a personal organization always is) with its keys, counters,
//   invites and review items; organizations with another owner, and those the caller is not an owner of, are left;
// - billing records of deleted organizations are pseudonymized (the payment provider's customer id replaced);
// - the caller's sessions and API keys end at once (the key revocation generation moves, so every replica drops
//   its key cache); pending invites to the caller's address are deleted;
// - the audit trail is kept, under a pseudonymous subject (a random id no table maps to the person) in place of the
//   user id; the user row and the per-user rate-limit windows go;
// - translation-memory entries and file answers go with a deleted organization; in the others they stay (the
//   organization's texts) without the person's id (created_by is set null with the user row).
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { audit } from './audit.ts';
import { memoryEntriesBy } from './memory.ts';
import { fileAnswersBy } from './memory-files.ts';
import type { Actor } from './orgs.ts';

type Row = Record<string, unknown>;

/** Everything the service holds about the caller, without API-key hashes, session hashes or the MFA secret. */
export async function exportData(ctx: AppContext, actor: Actor): Promise<Record<string, unknown>> {
  const q = <T extends Row>(text: string, params: unknown[] = [actor.userId]) => ctx.database.query<T>(text, params);
  const [profile] = await q(
    `SELECT id, email, name, github_id AS "githubId", mfa_enabled AS "mfaEnabled", created_at AS "createdAt"
       FROM users WHERE id = $1`,
  );
  const bundle = {
    format: 'scriptorium-translation-export/1',
    exportedAt: new Date(ctx.now()).toISOString(),
    profile,
    memberships: await q(
      `SELECT m.org_id AS "orgId", o.name AS "orgName", o.personal, m.role, m.created_at AS "joinedAt"
         FROM memberships m JOIN organizations o ON o.id = m.org_id WHERE m.user_id = $1 ORDER BY m.created_at`,
    ),
    apiKeys: await q(
      `SELECT id, prefix, name, org_id AS "orgId", created_at AS "createdAt", last_used_at AS "lastUsedAt",
              revoked_at AS "revokedAt" FROM api_keys WHERE user_id = $1 ORDER BY created_at`,
    ),
    sessions: await q(
      `SELECT created_at AS "createdAt", expires_at AS "expiresAt", last_seen_at AS "lastSeenAt",
              mfa_verified_at AS "mfaVerifiedAt" FROM sessions WHERE user_id = $1 ORDER BY created_at`,
    ),
    invitesSent: await q(
      `SELECT id, org_id AS "orgId", email, role, created_at AS "createdAt", expires_at AS "expiresAt",
              accepted_at AS "acceptedAt" FROM invites WHERE invited_by = $1 ORDER BY created_at`,
    ),
    invitesReceived: await q(
      `SELECT i.id, i.org_id AS "orgId", i.role, i.created_at AS "createdAt", i.accepted_at AS "acceptedAt"
         FROM invites i, users u WHERE u.id = $1 AND lower(i.email) = lower(u.email) ORDER BY i.created_at`,
    ),
    usage: await q(
      `SELECT to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, e.org_id AS "orgId",
              e.api_key_id AS "apiKeyId", e.kind, e.model, count(*)::int AS requests,
              sum(e.tokens_in)::bigint AS "tokensIn", sum(e.tokens_out)::bigint AS "tokensOut",
              sum(e.cost_micros)::bigint AS "costMicros"
         FROM usage_events e JOIN api_keys k ON k.id = e.api_key_id
        WHERE k.user_id = $1 GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5`,
    ),
    reviewDecisions: await q(
      `SELECT id, org_id AS "orgId", status, decided_at AS "decidedAt" FROM review_items WHERE decided_by = $1
        ORDER BY decided_at`,
    ),
    translationMemory: await memoryEntriesBy(ctx.database, actor.userId),
    translationMemoryFiles: await fileAnswersBy(ctx.database, actor.userId),
    audit: await q(
      `SELECT at, action, org_id AS "orgId", target, actor_kind AS "actorKind",
              (actor_user_id = $1) AS "byYou", request_id AS "requestId"
         FROM audit_log WHERE actor_user_id = $1 OR target = $1 ORDER BY at, id`,
    ),
  };
  await audit(ctx.database.db, {
    actorUserId: actor.userId,
    actorKind: 'user',
    action: 'privacy.export',
    target: actor.userId,
    requestId: actor.requestId ?? null,
  });
  return bundle;
}

export interface ErasurePlan {
  transferredOrganizations: { orgId: string; newOwnerId: string }[];
  deletedOrganizations: string[];
  leftOrganizations: string[];
  revokedKeys: number;
  endedSessions: number;
  pseudonymizedBillingRecords: number;
  keptAuditEntries: number;
}

const pseudonym = (value: string, salt: Buffer) =>
  `pseudonym:${createHash('sha256').update(salt).update(value).digest('hex').slice(0, 32)}`;

/**
 * Erases the caller (see the plan at the top of this file); returns what was done.
 * @example const { plan } = await eraseAccount(app, actor);
 */
export async function eraseAccount(ctx: AppContext, actor: Actor): Promise<{ deleted: true; plan: ErasurePlan }> {
  const userId = actor.userId;
  const salt = randomBytes(32); // forgotten after this call: the pseudonyms cannot be linked back
  const subject = pseudonym(userId, salt);
  const plan: ErasurePlan = {
    transferredOrganizations: [],
    deletedOrganizations: [],
    leftOrganizations: [],
    revokedKeys: 0,
    endedSessions: 0,
    pseudonymizedBillingRecords: 0,
    keptAuditEntries: 0,
  };
  let generation: number | null = null;
  await ctx.database.db.transaction(async (tx) => {
    const rows = async <T>(query: ReturnType<typeof sql>) =>
      ((await tx.execute(query)) as unknown as { rows: T[] }).rows;
    const memberships = await rows<{
      org_id: string;
      role: string;
      personal: boolean;
      owners: number;
      others: number;
    }>(sql`
      SELECT m.org_id, m.role, o.personal,
             (SELECT count(*)::int FROM memberships x WHERE x.org_id = m.org_id AND x.role = 'owner') AS owners,
             (SELECT count(*)::int FROM memberships x WHERE x.org_id = m.org_id AND x.user_id <> m.user_id) AS others
        FROM memberships m JOIN organizations o ON o.id = m.org_id
       WHERE m.user_id = ${userId} ORDER BY m.org_id FOR UPDATE OF m`);
    // Counted first: deleting organizations below removes their keys.
    const [keys] = await rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM api_keys WHERE user_id = ${userId} AND revoked_at IS NULL`,
    );
    const [sessions] = await rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM sessions WHERE user_id = ${userId}`,
    );
    plan.revokedKeys = keys!.n;
    plan.endedSessions = sessions!.n;
    for (const m of memberships) {
      if (m.role === 'owner' && (m.personal || m.others === 0)) {
        plan.deletedOrganizations.push(m.org_id);
      } else if (m.role === 'owner' && m.owners === 1) {
        const [heir] = await rows<{ user_id: string }>(sql`
          SELECT user_id FROM memberships WHERE org_id = ${m.org_id} AND user_id <> ${userId}
           ORDER BY (role = 'admin') DESC, created_at, user_id LIMIT 1`);
        await tx.execute(
          sql`UPDATE memberships SET role = 'owner' WHERE org_id = ${m.org_id} AND user_id = ${heir!.user_id}`,
        );
        plan.transferredOrganizations.push({ orgId: m.org_id, newOwnerId: heir!.user_id });
      } else {
        plan.leftOrganizations.push(m.org_id);
      }
    }
    for (const orgId of plan.deletedOrganizations) {
      const billing = await rows<{ id: string; customer_ref: string | null }>(
        sql`SELECT id, customer_ref FROM billing_events WHERE org_id = ${orgId} AND customer_ref IS NOT NULL`,
      );
      for (const b of billing) {
        await tx.execute(
          sql`UPDATE billing_events SET customer_ref = ${pseudonym(b.customer_ref!, salt)} WHERE id = ${b.id}`,
        );
      }
      plan.pseudonymizedBillingRecords += billing.length;
      await tx.execute(sql`DELETE FROM organizations WHERE id = ${orgId}`);
    }
    // Keys and sessions go with the user row (cascade); every replica drops its key cache.
    const [bumped] = await rows<{ generation: number }>(
      sql`UPDATE api_key_generation SET generation = generation + 1 WHERE id = 1 RETURNING generation`,
    );
    generation = Number(bumped!.generation);
    await tx.execute(sql`DELETE FROM invites i USING users u
                          WHERE u.id = ${userId} AND lower(i.email) = lower(u.email) AND i.accepted_at IS NULL`);
    await audit(tx, {
      actorUserId: userId,
      actorKind: 'user',
      action: 'privacy.delete',
      target: userId,
      requestId: actor.requestId ?? null,
      meta: {
        transferred: plan.transferredOrganizations.length,
        deleted: plan.deletedOrganizations.length,
        left: plan.leftOrganizations.length,
      },
    });
    const [kept] = await rows<{ n: number }>(sql`
      WITH a AS (UPDATE audit_log SET actor_user_id = ${subject} WHERE actor_user_id = ${userId} RETURNING 1)
      SELECT count(*)::int AS n FROM a`);
    await tx.execute(sql`UPDATE audit_log SET target = ${subject} WHERE target = ${userId}`);
    await tx.execute(sql`UPDATE audit_log SET meta = jsonb_set(meta, '{userId}', to_jsonb(${subject}::text))
                          WHERE meta->>'userId' = ${userId}`);
    plan.keptAuditEntries = kept!.n;
    // The per-user rate-limit windows are named after the user id.
    await tx.execute(sql`DELETE FROM rate_limit_windows WHERE bucket LIKE ${`%:${userId}`}`);
    await tx.execute(sql`DELETE FROM users WHERE id = ${userId}`);
  });
  if (generation !== null) ctx.apiKeys.noteGeneration(generation);
  return { deleted: true, plan };
}
