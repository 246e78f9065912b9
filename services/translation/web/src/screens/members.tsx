// Members of the selected organization and their roles; for admins and owners: invite by e-mail (the link to send is
// shown to copy), pending invitations, role changes and removals where the role table allows them.
import { useId, useState } from 'preact/hooks';
import {
  changeRole,
  invites as fetchInvites,
  members as fetchMembers,
  invite,
  removeMember,
  withdrawInvite,
} from '../api/endpoints.ts';
import type { InviteCreated, Member, Role } from '../api/types.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { LoadState } from '../components/load-state.tsx';
import { NoOrg } from '../components/no-org.tsx';
import { Notice } from '../components/notice.tsx';
import { ShownOnce } from '../components/shown-once.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { formatTime } from '../lib/format.ts';
import { allows, mayChangeRole, mayRemove, ROLES } from '../lib/roles.ts';
import { useAction } from '../lib/use-action.ts';
import { useOrgResource } from '../lib/use-resource.ts';
import { useSession } from '../session.tsx';

export function Members() {
  const session = useSession();
  const org = session.org;
  const id = useId();
  const list = useOrgResource(org?.id, fetchMembers, []);
  const canInvite = org ? allows(org.role, 'members.invite') : false;
  const pending = useOrgResource(canInvite ? org?.id : undefined, fetchInvites, []);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [created, setCreated] = useState<InviteCreated | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const { busy, message, run, submit } = useAction('session');

  if (!org) return <NoOrg />;
  const myRole = org.role;
  const owners = list.data?.filter((m) => m.role === 'owner').length ?? 0;

  // The message is said once the lists show the change.
  const act = (what: () => Promise<unknown>, done: string) =>
    run(async () => {
      await what();
      await Promise.all([list.reload(), pending.reload()]);
      await session.refresh();
      return done;
    });

  const sendInvite = submit(async () => {
    setCreated(null);
    setCreated(await invite(org.id, { email: email.trim(), role }));
    setEmail('');
    await pending.reload();
  });

  return (
    <>
      <h1>Members of {org.name}</h1>
      <p class="muted">Your role here: {myRole}.</p>
      <LoadState resource={list} what="the members" />
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {list.data && (
        <DataTable caption="Members and their roles" columns={['Member', 'Role', 'Joined']} actions>
          {list.data.map((m) => {
            const self = m.userId === session.me.id;
            const lastOwner = m.role === 'owner' && owners === 1;
            const roles = ROLES.filter((r) => r === m.role || (!self && mayChangeRole(myRole, m.role, r)));
            // Anyone may leave, except the last owner; others only where the role table allows.
            const removable = self ? !lastOwner : mayRemove(myRole, m.role);
            const label = m.name ? `${m.name} (${m.email})` : m.email;
            return (
              <tr key={m.userId}>
                <th scope="row">
                  {label}
                  {self && <span class="badge">you</span>}
                </th>
                <td>
                  {roles.length > 1 ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      disabled={busy}
                      onChange={(e) => {
                        const to = e.currentTarget.value as Role;
                        void act(() => changeRole(org.id, m.userId, to), `${m.email} is now ${to}.`);
                      }}
                    >
                      {roles.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{formatTime(m.joinedAt)}</td>
                <td>
                  {removable && (
                    <button
                      type="button"
                      class="secondary"
                      aria-label={self ? 'Leave' : `Remove ${m.email}`}
                      disabled={busy}
                      onClick={() => setRemoving(m)}
                    >
                      {self ? 'Leave' : 'Remove'}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}

      {canInvite && (
        <section class="card" aria-labelledby={`${id}-invite`}>
          <h2 id={`${id}-invite`}>Invite someone</h2>
          <form onSubmit={sendInvite} class="stack">
            <div class="row">
              <div class="field">
                <label for={`${id}-email`}>E-mail address</label>
                <input
                  id={`${id}-email`}
                  type="email"
                  required
                  autocomplete="off"
                  value={email}
                  onInput={(e) => setEmail(e.currentTarget.value)}
                />
              </div>
              <div class="field">
                <label for={`${id}-role`}>Role</label>
                <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
                  {ROLES.filter((r) => mayChangeRole(myRole, 'member', r)).map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </div>
            </div>
            <SubmitRow disabled={busy}>Create invitation</SubmitRow>
          </form>
          {created && (
            <ShownOnce kind="success" value={created.acceptUrl} copyLabel="Copy the link">
              <p>
                Invitation for <strong>{created.email}</strong> ({created.role}) created; it expires{' '}
                {formatTime(created.expiresAt)}. Send them this link (it is shown only now):
              </p>
            </ShownOnce>
          )}
          <LoadState resource={pending} what="the pending invitations" />
          {pending.data && pending.data.length > 0 && (
            <>
              <h3>Pending invitations</h3>
              <ul class="plain-list">
                {pending.data.map((i) => (
                  <li key={i.id}>
                    {i.email} ({i.role}), expires {formatTime(i.expiresAt)}{' '}
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Withdraw the invitation of ${i.email}`}
                      disabled={busy}
                      onClick={() =>
                        act(() => withdrawInvite(org.id, i.id), `The invitation of ${i.email} is withdrawn.`)
                      }
                    >
                      Withdraw
                    </button>
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
      )}

      {removing && (
        <ConfirmDialog
          title={removing.userId === session.me.id ? `Leave ${org.name}?` : `Remove ${removing.email}?`}
          confirmLabel={removing.userId === session.me.id ? 'Leave' : 'Remove'}
          danger
          onCancel={() => setRemoving(null)}
          onConfirm={() => {
            const m = removing;
            setRemoving(null);
            void act(
              () => removeMember(org.id, m.userId),
              m.userId === session.me.id ? `You left ${org.name}.` : `${m.email} is no longer a member.`,
            );
          }}
        >
          <p>
            {removing.userId === session.me.id
              ? 'You lose access to its keys, usage and reviews.'
              : 'They lose access to the organization at once. Their API keys for it stop working.'}
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
