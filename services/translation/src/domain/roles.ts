// Authorization of session routes that act on an organization: every one asks `authorize`, which answers the same 403
// whether the organization does not exist or the caller is not a member or lacks the role (one membership lookup in
// both cases, so the timing does not tell them apart). What each role may do is the role table (role-table.ts).
import type { Database } from '../db/index.ts';
import { forbidden } from '../errors.ts';
import { allows, type Permission, type Role } from './role-table.ts';

/** The caller's role in `orgId`, or null when not a member (or no such organization). */
export async function roleIn(database: Database, orgId: string, userId: string): Promise<Role | null> {
  const [row] = await database.query<{ role: Role }>(
    'SELECT role FROM memberships WHERE org_id = $1 AND user_id = $2',
    [orgId, userId],
    'membership_role',
  );
  return row?.role ?? null;
}

/**
 * The caller's role in `orgId` if it allows `permission`; otherwise a 403 that does not say whether the organization
 * exists.
 * @example const role = await authorize(database, orgId, userId, 'members.invite');
 */
export async function authorize(
  database: Database,
  orgId: string,
  userId: string,
  permission: Permission,
): Promise<Role> {
  const role = await roleIn(database, orgId, userId);
  if (role === null || !allows(role, permission)) throw forbidden();
  return role;
}
