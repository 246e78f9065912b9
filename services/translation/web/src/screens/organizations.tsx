// The user's organizations: switch between them, the selected one's translation memory, create one (the creator
// becomes its owner).
import { useId, useState } from 'preact/hooks';
import { createOrganization } from '../api/endpoints.ts';
import { DataTable } from '../components/data-table.tsx';
import { MemoryCard } from '../components/memory-card.tsx';
import { Notice } from '../components/notice.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { useAction } from '../lib/use-action.ts';
import { useSession } from '../session.tsx';

export function Organizations() {
  const session = useSession();
  const id = useId();
  const [name, setName] = useState('');
  const { busy, message, submit } = useAction('session');
  const create = submit(async () => {
    const org = await createOrganization(name.trim());
    session.selectOrg(org.id);
    await session.refresh();
    setName('');
    return `Created ${org.name}; it is now the selected organization.`;
  });
  return (
    <>
      <h1>Organizations</h1>
      <DataTable caption="Your organizations" columns={['Name', 'Your role', 'Plan']} actions>
        {session.me.organizations.map((o) => (
          <tr key={o.id}>
            <th scope="row">
              {o.name}
              {o.personal && <span class="badge">personal</span>}
            </th>
            <td>{o.role}</td>
            <td>{o.planId}</td>
            <td>
              {session.org?.id === o.id ? (
                <span class="muted">selected</span>
              ) : (
                <button
                  type="button"
                  class="secondary"
                  aria-label={`Switch to ${o.name}`}
                  onClick={() => session.selectOrg(o.id)}
                >
                  Switch
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      {session.org && <MemoryCard org={session.org} />}
      <section class="card" aria-labelledby={`${id}-title`}>
        <h2 id={`${id}-title`}>Create an organization</h2>
        <form onSubmit={create} class="stack">
          <div class="field">
            <label for={`${id}-name`}>Name</label>
            <input
              id={`${id}-name`}
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </div>
          <SubmitRow disabled={busy || !name.trim()}>Create organization</SubmitRow>
        </form>
        {message && <Notice kind={message.kind}>{message.text}</Notice>}
      </section>
    </>
  );
}
