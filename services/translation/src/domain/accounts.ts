// Users, organizations, memberships and API keys: what the operator CLI, `make dev` and the API-key auth need.
import { and, eq, sql } from 'drizzle-orm';
import type { PlanConfig } from '../config.ts';
import type { ApiKeys, Principal } from '../context.ts';
import type { Database } from '../db/index.ts';
import { type ApiKey, apiKeys, auditLog, memberships, organizations, plans, users } from '../db/schema.ts';
import { digestsEqual, generateApiKey, looksLikeApiKey, sha256 } from '../infra/secrets.ts';
import { ORG_LIMITS_COLUMNS } from './metering.ts';

/** Upserts the operator's plans (PLANS) so organizations can reference them by name. */
export async function syncPlans(database: Database, configured: PlanConfig[]): Promise<void> {
  for (const p of configured) {
    const values = {
      id: p.name,
      name: p.name,
      quotaTokens: p.tokensPerPeriod,
      periodDays: p.periodDays,
      dailyBudgetMicros: p.dailyBudgetCents * 10_000,
      externalPriceId: p.externalPriceId ?? null,
    };
    await database.db
      .insert(plans)
      .values(values)
      .onConflictDoUpdate({
        target: plans.id,
        set: {
          quotaTokens: values.quotaTokens,
          periodDays: values.periodDays,
          dailyBudgetMicros: values.dailyBudgetMicros,
          externalPriceId: values.externalPriceId,
        },
      });
  }
}

/** Finds a user by email (case-insensitive) or creates one. */
export async function ensureUser(database: Database, email: string): Promise<string> {
  const existing = await database.db
    .select({ id: users.id })
    .from(users)
    .where(sql`lower(${users.email}) = lower(${email})`);
  if (existing[0]) return existing[0].id;
  const [row] = await database.db.insert(users).values({ email }).returning({ id: users.id });
  return row!.id;
}

/** The user's personal organization (keys issued without an org belong to it), created on first use. */
export async function ensurePersonalOrg(database: Database, userId: string, planId: string): Promise<string> {
  const existing = await database.db
    .select({ id: organizations.id })
    .from(organizations)
    .innerJoin(memberships, eq(memberships.orgId, organizations.id))
    .where(and(eq(memberships.userId, userId), eq(organizations.personal, true), eq(memberships.role, 'owner')));
  if (existing[0]) return existing[0].id;
  const [org] = await database.db
    .insert(organizations)
    .values({ name: 'personal', personal: true, planId })
    .returning({ id: organizations.id });
  await database.db.insert(memberships).values({ orgId: org!.id, userId, role: 'owner' });
  return org!.id;
}

export async function createOrganization(
  database: Database,
  input: { name: string; planId: string; ownerId: string },
): Promise<string> {
  const [org] = await database.db
    .insert(organizations)
    .values({ name: input.name, planId: input.planId })
    .returning({ id: organizations.id });
  await database.db.insert(memberships).values({ orgId: org!.id, userId: input.ownerId, role: 'owner' });
  return org!.id;
}

export class NotAMemberError extends Error {}

/**
 * Issues an API key for `userId` in `orgId` (or the personal org). The secret is returned once; only its hash is stored.
 * Throws NotAMemberError when the user is not a member of `orgId`.
 */
export async function issueApiKey(
  database: Database,
  input: {
    userId: string;
    orgId?: string | undefined;
    defaultPlan: string;
    actor: 'operator' | 'user';
    name?: string;
    requestId?: string;
  },
): Promise<{ apiKey: string; prefix: string; keyId: string; orgId: string }> {
  let orgId = input.orgId;
  if (orgId) {
    const member = await database.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.orgId, orgId), eq(memberships.userId, input.userId)));
    if (!member[0]) throw new NotAMemberError('not a member of the organization');
  } else {
    orgId = await ensurePersonalOrg(database, input.userId, input.defaultPlan);
  }
  const key = generateApiKey();
  const [row] = await database.db
    .insert(apiKeys)
    .values({ hash: key.hash, prefix: key.prefix, name: input.name ?? null, userId: input.userId, orgId })
    .returning({ id: apiKeys.id });
  await database.db.insert(auditLog).values({
    actorKind: input.actor,
    actorUserId: input.actor === 'user' ? input.userId : null,
    orgId,
    action: 'api_key.create',
    target: row!.id,
    requestId: input.requestId ?? null,
    meta: { prefix: key.prefix, userId: input.userId },
  });
  return { apiKey: key.secret, prefix: key.prefix, keyId: row!.id, orgId };
}

const PRINCIPAL_SQL = `
SELECT k.id AS "keyId", k.hash, k.user_id AS "userId", k.org_id AS "orgId", ${ORG_LIMITS_COLUMNS},
       o.judge_sample_rate AS "judgeSampleRate", o.review_threshold AS "reviewThreshold",
       o.memory_enabled AS "memoryEnabled"
  FROM api_keys k
  JOIN organizations o ON o.id = k.org_id
  JOIN plans p ON p.id = o.plan_id
  JOIN users u ON u.id = k.user_id
 WHERE k.hash = $1 AND k.revoked_at IS NULL AND u.deleted_at IS NULL`;

/**
 * Resolves API keys to principals: looked up by SHA-256 hash, the stored hash compared again in constant time.
 * A short in-process cache (ttlMs, 0 = off) spares the database on hot keys. Revocation: `revokeApiKey` bumps
 * `api_key_generation` in the same statement; before answering from the cache, the resolver re-reads that
 * generation when its last read is older than checkMs (one shared query, whatever the number of keys) and drops the
 * whole cache when it moved. So a revocation is seen at once by the process that made it (it passes the new
 * generation to `noteGeneration`) and within checkMs (+ one round trip) by every other replica.
 */
export class ApiKeyResolver implements ApiKeys {
  readonly #database: Database;
  readonly #ttlMs: number;
  readonly #checkMs: number;
  readonly #cache = new Map<string, { principal: Principal | null; expires: number; generation: number }>();
  /** Last generation read; entries cached under another one are never served. */
  #generation = -1;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #checking: Promise<void> | null = null;

  constructor(database: Database, ttlMs: number, checkMs = 1_000) {
    this.#database = database;
    this.#ttlMs = ttlMs;
    this.#checkMs = checkMs;
  }

  /**
   * A generation read from the database (or returned by `revokeApiKey`): drops the cache when it moved forward. It only
   * grows, so an older read finishing late is ignored.
   */
  noteGeneration(generation: number): void {
    if (generation > this.#generation) {
      this.#cache.clear();
      this.#generation = generation;
    }
  }

  async #freshGeneration(): Promise<void> {
    if (Date.now() - this.#checkedAt < this.#checkMs) return;
    this.#checking ??= (async () => {
      const startedAt = Date.now();
      const [row] = await this.#database.query<{ generation: string | number }>(
        'SELECT generation FROM api_key_generation WHERE id = 1',
        [],
        'api_key_generation',
      );
      this.noteGeneration(Number(row?.generation ?? 0));
      this.#checkedAt = startedAt;
    })().finally(() => {
      this.#checking = null;
    });
    await this.#checking;
  }

  async resolve(secret: string): Promise<Principal | null> {
    if (!looksLikeApiKey(secret)) return null;
    const hash = sha256(secret);
    const cacheKey = hash.toString('base64');
    if (this.#ttlMs > 0) {
      await this.#freshGeneration();
      const cached = this.#cache.get(cacheKey);
      if (cached && cached.expires > Date.now() && cached.generation === this.#generation) return cached.principal;
    }
    // Tagged with the generation known before the lookup: if a revocation moves it meanwhile, the entry is stale.
    const generation = this.#generation;
    const now = Date.now();
    const [row] = await this.#database.query<Principal & Pick<ApiKey, 'hash'>>(
      PRINCIPAL_SQL,
      [hash],
      'api_key_principal',
    );
    let principal: Principal | null = null;
    if (row && digestsEqual(Buffer.from(row.hash), hash)) {
      const { hash: _stored, ...fields } = row;
      principal = fields;
    }
    if (this.#ttlMs > 0) {
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(cacheKey, { principal, expires: now + this.#ttlMs, generation });
    }
    if (principal) {
      // Throttled: at most one write per key per minute.
      void this.#database
        .query(
          `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
          [principal.keyId],
        )
        .catch(() => {});
    }
    return principal;
  }
}

const REVOKE_SQL = `
WITH r AS (
  UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id, org_id, prefix
), g AS (
  UPDATE api_key_generation SET generation = generation + 1 WHERE id = 1 AND EXISTS (SELECT 1 FROM r)
  RETURNING generation
), a AS (
  INSERT INTO audit_log (actor_kind, actor_user_id, org_id, action, target, request_id, meta)
  SELECT $2, $3, r.org_id, 'api_key.revoke', r.id, $4, jsonb_build_object('prefix', r.prefix) FROM r
)
SELECT g.generation FROM g`;

/**
 * Revokes an API key (idempotent: false when it was unknown or already revoked). In one statement: `revoked_at`,
 * the revocation generation and the audit entry. With `resolver`, this process stops accepting the key at once.
 */
export async function revokeApiKey(
  database: Database,
  input: { keyId: string; actor: 'user' | 'operator' | 'system'; actorUserId?: string; requestId?: string },
  resolver?: ApiKeys,
): Promise<boolean> {
  const [row] = await database.query<{ generation: string | number }>(
    REVOKE_SQL,
    [input.keyId, input.actor, input.actorUserId ?? null, input.requestId ?? null],
    'api_key_revoke',
  );
  if (!row) return false;
  resolver?.noteGeneration(Number(row.generation));
  return true;
}
