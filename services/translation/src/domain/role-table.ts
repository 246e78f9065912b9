// Organization roles and what each may do: the role table of the README, as code. Pure, with no import: the web app
// bundles this file to show a control only where the service would allow the action (src/domain/roles.ts asks it).
export const ROLES = ['member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

const rank = (role: Role): number => ROLES.indexOf(role);

/** The least role each permission needs (owner ⊇ admin ⊇ member). */
export const PERMISSIONS = {
  /** List the members and their roles. */
  'members.list': 'member',
  /** See the organization's usage against its quota and budget. */
  'usage.read': 'member',
  /** Approve, edit or reject review items, and list the queue. */
  'reviews.act': 'member',
  /** Issue API keys for the organization. */
  'keys.issue': 'admin',
  /** Revoke any of the organization's keys (everyone may revoke their own). */
  'keys.revoke': 'admin',
  /** Invite by e-mail, list and withdraw pending invites. */
  'members.invite': 'admin',
  /** Change roles (only an owner grants, changes or takes away the owner role). */
  'members.role': 'admin',
  /** Remove members (an owner only by an owner). */
  'members.remove': 'admin',
  /** See whether the translation memory is on and how many entries it holds. */
  'memory.read': 'member',
  /** Turn the translation memory on or off (off deletes it), import and export it as TMX. */
  'memory.manage': 'admin',
  /** Manage billing (the subscription is bound to the organization by the payment provider's events). */
  'billing.manage': 'owner',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof PERMISSIONS;

/** Whether `role` may do `permission`. */
export const allows = (role: Role, permission: Permission): boolean => rank(role) >= rank(PERMISSIONS[permission]);

/** Whether `actor` may give `target` the role `to` (taking it from `from`); the last-owner rule is checked apart. */
export function mayChangeRole(actor: Role, from: Role, to: Role): boolean {
  if (!allows(actor, 'members.role')) return false;
  if (from === 'owner' || to === 'owner') return actor === 'owner';
  return true;
}

/** Whether `actor` may remove a member whose role is `target` (leaving, i.e. removing oneself, is always allowed). */
export const mayRemove = (actor: Role, target: Role): boolean =>
  allows(actor, 'members.remove') && (target !== 'owner' || actor === 'owner');
