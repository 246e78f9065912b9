// The audit log of security-relevant actions: who (actor), where (organization), what (action, target), when and
// through which request. Never secrets, keys, tokens or customer text: meta holds ids, roles, prefixes and counts.
import type { Database } from '../db/index.ts';
import { auditLog } from '../db/schema.ts';

export type AuditAction =
  | 'session.sign_in'
  | 'session.sign_out'
  | 'org.create'
  | 'invite.create'
  | 'invite.accept'
  | 'member.role_change'
  | 'member.remove'
  | 'member.leave'
  | 'api_key.create'
  | 'api_key.revoke'
  | 'review.approve'
  | 'review.edit'
  | 'review.reject'
  | 'mfa.enroll'
  | 'mfa.enable'
  | 'mfa.verify'
  | 'mfa.failure'
  | 'privacy.export'
  | 'privacy.delete'
  | 'billing.subscription'
  | 'billing.invoice'
  | 'memory.enable'
  | 'memory.disable'
  | 'memory.export'
  | 'memory.import';

export interface AuditEntry {
  /** The user who acted; null for the payment provider or the operator. */
  actorUserId: string | null;
  actorKind: 'user' | 'operator' | 'system';
  orgId?: string | null;
  action: AuditAction;
  target?: string | null;
  requestId?: string | null;
  meta?: Record<string, string | number | boolean | null>;
}

/** Something that can run a drizzle insert: the database, or a transaction of it. */
type Writer = Pick<Database['db'], 'insert'>;

/**
 * Records one audit entry (in the caller's transaction when `db` is one).
 * @example await audit(database.db, { actorUserId, actorKind: 'user', orgId, action: 'invite.create', target: inviteId });
 */
export async function audit(db: Writer, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values({
    actorUserId: entry.actorUserId,
    actorKind: entry.actorKind,
    orgId: entry.orgId ?? null,
    action: entry.action,
    target: entry.target ?? null,
    requestId: entry.requestId ?? null,
    meta: entry.meta ?? {},
  });
}
