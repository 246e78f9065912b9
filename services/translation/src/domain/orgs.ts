// Organizations, members and invites for the session API. Every function takes the signed-in caller and checks the
// role table (roles.ts) first; a refusal never says whether the organization exists.
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import {
  type Invite,
  invites,
  type Membership,
  memberships,
  type Organization,
  organizations,
  type User,
} from '../db/schema.ts';
import { conflict, forbidden, notFound } from '../errors.ts';
import { sha256 } from '../infra/secrets.ts';
import { audit } from './audit.ts';
import { mayChangeRole, mayRemove, type Role } from './role-table.ts';
import { authorize, roleIn } from './roles.ts';

/** Who acts, and through which request (for the audit log). */
export interface Actor {
  userId: string;
  requestId?: string;
}

export type OrgSummary = Pick<Organization, 'id' | 'name' | 'personal' | 'planId' | 'subscriptionStatus'> & {
  role: Role;
};

/** Creates an organization on the default plan with the caller as its owner. */
export async function createOrg(ctx: AppContext, actor: Actor, name: string): Promise<OrgSummary> {
  return ctx.database.db.transaction(async (tx) => {
    const [org] = await tx.insert(organizations).values({ name, planId: ctx.config.defaultPlan }).returning();
    await tx.insert(memberships).values({
      orgId: org!.id,
      userId: actor.userId,
      role: 'owner',
    });
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId: org!.id,
      action: 'org.create',
      target: org!.id,
      requestId: actor.requestId ?? null,
    });
    return {
      id: org!.id,
      name: org!.name,
      personal: org!.personal,
      planId: org!.planId,
      subscriptionStatus: org!.subscriptionStatus,
      role: 'owner' as const,
    };
  });
}

/** The caller's organizations with their role, oldest membership first. */
export async function listOrgs(ctx: AppContext, actor: Actor): Promise<OrgSummary[]> {
  return ctx.database.query<OrgSummary>(
    `SELECT o.id, o.name, o.personal, o.plan_id AS "planId", o.subscription_status AS "subscriptionStatus", m.role
       FROM memberships m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = $1 ORDER BY m.created_at, o.id`,
    [actor.userId],
  );
}

export type MemberView = Pick<Membership, 'userId' | 'role'> &
  Pick<User, 'email' | 'name'> & { joinedAt: Membership['createdAt'] };

/** The members of `orgId` (members only). */
export async function listMembers(ctx: AppContext, actor: Actor, orgId: string): Promise<MemberView[]> {
  await authorize(ctx.database, orgId, actor.userId, 'members.list');
  return ctx.database.query<MemberView>(
    `SELECT m.user_id AS "userId", m.role, u.email, u.name, m.created_at AS "joinedAt"
       FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.org_id = $1 ORDER BY m.created_at, m.user_id`,
    [orgId],
  );
}

export type InviteView = Pick<Invite, 'id' | 'email' | 'role' | 'createdAt' | 'expiresAt' | 'invitedBy'>;

/** Pending invites of `orgId` (admin or above). */
export async function listInvites(ctx: AppContext, actor: Actor, orgId: string): Promise<InviteView[]> {
  await authorize(ctx.database, orgId, actor.userId, 'members.invite');
  return ctx.database.query<InviteView>(
    `SELECT id, email, role, created_at AS "createdAt", expires_at AS "expiresAt", invited_by AS "invitedBy"
       FROM invites WHERE org_id = $1 AND accepted_at IS NULL AND expires_at > $2 ORDER BY created_at, id`,
    [orgId, new Date(ctx.now()).toISOString()],
  );
}

/**
 * Invites `email` to `orgId` with `role` (admin or above; the owner role only by an owner). Returns the invite with
 * its accept link, whose token is shown this once (only its hash is stored).
 */
export async function invite(
  ctx: AppContext,
  actor: Actor,
  orgId: string,
  input: { email: string; role: Role },
): Promise<InviteView & { acceptUrl: string; token: string }> {
  const role = await authorize(ctx.database, orgId, actor.userId, 'members.invite');
  if (input.role === 'owner' && role !== 'owner') throw forbidden();
  const [member] = await ctx.database.query<{ n: number }>(
    `SELECT 1 AS n FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = $1 AND lower(u.email) = lower($2)`,
    [orgId, input.email],
  );
  if (member) throw conflict('already a member of the organization');
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(ctx.now() + ctx.config.session.inviteTtlMs);
  return ctx.database.db.transaction(async (tx) => {
    const [row] = await tx
      .insert(invites)
      .values({
        orgId,
        email: input.email,
        role: input.role,
        invitedBy: actor.userId,
        tokenHash: sha256(token),
        expiresAt,
      })
      .returning();
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId,
      action: 'invite.create',
      target: row!.id,
      requestId: actor.requestId ?? null,
      meta: { role: input.role },
    });
    const url = new URL('/', ctx.config.publicBaseUrl);
    url.searchParams.set('invite', token);
    return {
      id: row!.id,
      email: row!.email,
      role: row!.role,
      createdAt: row!.createdAt,
      expiresAt: row!.expiresAt,
      invitedBy: row!.invitedBy,
      acceptUrl: url.toString(),
      token,
    };
  });
}

/** Withdraws a pending invite (admin or above); 404 when it is not one of this organization's pending invites. */
export async function withdrawInvite(ctx: AppContext, actor: Actor, orgId: string, inviteId: string): Promise<void> {
  await authorize(ctx.database, orgId, actor.userId, 'members.invite');
  const rows = await ctx.database.query(
    'DELETE FROM invites WHERE id = $1 AND org_id = $2 AND accepted_at IS NULL RETURNING id',
    [inviteId, orgId],
  );
  if (rows.length === 0) throw notFound('invite not found');
}

/**
 * Accepts the invite whose token is `token` for the signed-in caller, whose e-mail must be the invited one (any
 * case). 404 for an unknown, expired or used token; 403 when it was sent to another address; 409 when already a
 * member.
 */
export async function acceptInvite(ctx: AppContext, actor: Actor, token: string): Promise<OrgSummary> {
  const now = new Date(ctx.now()).toISOString();
  const [row] = await ctx.database.query<Pick<Invite, 'id' | 'orgId' | 'email' | 'role'> & { userEmail: string }>(
    `SELECT i.id, i.org_id AS "orgId", i.email, i.role, u.email AS "userEmail"
       FROM invites i, users u
      WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.expires_at > $2 AND u.id = $3`,
    [sha256(token), now, actor.userId],
  );
  if (!row) throw notFound('invite not found or expired');
  if (row.email.toLowerCase() !== row.userEmail.toLowerCase())
    throw forbidden('this invite was sent to another e-mail address');
  if ((await roleIn(ctx.database, row.orgId, actor.userId)) !== null) throw conflict('already a member');
  await ctx.database.db.transaction(async (tx) => {
    await tx.insert(memberships).values({ orgId: row.orgId, userId: actor.userId, role: row.role });
    await tx.execute(sql`UPDATE invites SET accepted_at = ${now} WHERE id = ${row.id}`);
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId: row.orgId,
      action: 'invite.accept',
      target: row.id,
      requestId: actor.requestId ?? null,
      meta: { role: row.role },
    });
  });
  const orgs = await listOrgs(ctx, actor);
  return orgs.find((o) => o.id === row.orgId)!;
}

/** Owners of `orgId` (the last one may not leave, be removed or lose the role). */
async function ownerCount(ctx: AppContext, orgId: string): Promise<number> {
  const [row] = await ctx.database.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM memberships WHERE org_id = $1 AND role = 'owner'",
    [orgId],
  );
  return row?.n ?? 0;
}

/** Changes a member's role (see mayChangeRole); 404 for a user who is not a member. */
export async function changeRole(
  ctx: AppContext,
  actor: Actor,
  orgId: string,
  userId: string,
  to: Role,
): Promise<MemberView> {
  const role = await authorize(ctx.database, orgId, actor.userId, 'members.role');
  const from = await roleIn(ctx.database, orgId, userId);
  if (from === null) throw notFound('member not found');
  if (!mayChangeRole(role, from, to)) throw forbidden();
  if (from === 'owner' && to !== 'owner' && (await ownerCount(ctx, orgId)) <= 1)
    throw conflict('the last owner cannot give up the owner role');
  if (from !== to) {
    await ctx.database.db.transaction(async (tx) => {
      await tx.execute(sql`UPDATE memberships SET role = ${to} WHERE org_id = ${orgId} AND user_id = ${userId}`);
      await audit(tx, {
        actorUserId: actor.userId,
        actorKind: 'user',
        orgId,
        action: 'member.role_change',
        target: userId,
        requestId: actor.requestId ?? null,
        meta: { from, to },
      });
    });
  }
  const members = await listMembers(ctx, actor, orgId);
  return members.find((m) => m.userId === userId)!;
}

/** Removes a member (admin or above; an owner only by an owner), or the caller leaves; never the last owner. */
export async function removeMember(ctx: AppContext, actor: Actor, orgId: string, userId: string): Promise<void> {
  const self = userId === actor.userId;
  const role = self
    ? await authorize(ctx.database, orgId, actor.userId, 'members.list')
    : await authorize(ctx.database, orgId, actor.userId, 'members.remove');
  const target = self ? role : await roleIn(ctx.database, orgId, userId);
  if (target === null) throw notFound('member not found');
  if (!self && !mayRemove(role, target)) throw forbidden();
  if (target === 'owner' && (await ownerCount(ctx, orgId)) <= 1)
    throw conflict('the last owner cannot leave or be removed');
  await ctx.database.db.transaction(async (tx) => {
    await tx.execute(sql`DELETE FROM memberships WHERE org_id = ${orgId} AND user_id = ${userId}`);
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId,
      action: self ? 'member.leave' : 'member.remove',
      target: userId,
      requestId: actor.requestId ?? null,
      meta: { role: target },
    });
  });
}

export interface BillingView {
  orgId: string;
  planId: string;
  subscriptionStatus: string | null;
  currentPeriodEnd: Date | null;
  customerRef: string | null;
  events: { id: string; type: string; receivedAt: Date }[];
}

/** The organization's subscription as the payment provider's events left it (owners only). */
export async function billingOf(ctx: AppContext, actor: Actor, orgId: string): Promise<BillingView> {
  await authorize(ctx.database, orgId, actor.userId, 'billing.manage');
  const [org] = await ctx.database.query<Omit<BillingView, 'events'>>(
    `SELECT id AS "orgId", plan_id AS "planId", subscription_status AS "subscriptionStatus",
            current_period_end AS "currentPeriodEnd", external_customer_id AS "customerRef"
       FROM organizations WHERE id = $1`,
    [orgId],
  );
  const events = await ctx.database.query<BillingView['events'][number]>(
    `SELECT id, type, received_at AS "receivedAt" FROM billing_events WHERE org_id = $1 ORDER BY received_at DESC LIMIT 50`,
    [orgId],
  );
  return { ...org!, events };
}
