import { href } from '../lib/router.ts';

/** Shown by screens that work on an organization when the user belongs to none. */
export function NoOrg() {
  return (
    <p>
      You do not belong to an organization yet. <a href={href('/organizations')}>Create one</a>, or accept an
      invitation.
    </p>
  );
}
