// The user's organizations: switch between them, the selected one's translation memory, create one (the creator
// becomes its owner).
import { useId, useState } from 'preact/hooks';
import { createOrganization } from '../api/endpoints.ts';
import { MemoryCard } from '../components/memory-card.tsx';
import { Notice } from '../components/notice.tsx';
import { describeError } from '../lib/messages.ts';
import { useSession } from '../session.tsx';

export function Organizations() {
  const session = useSession();
  const id = useId();
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string } | null>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const org = await createOrganization(name.trim());
      session.selectOrg(org.id);
      await session.refresh();
      setName('');
      setMessage({ kind: 'success', text: `Created ${org.name}; it is now the selected organization.` });
    } catch (err) {
      setMessage({ kind: 'error', text: describeError(err, 'session') });
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Organizations</h1>
      <div class="table-wrap">
        <table>
          <caption class="sr-only">Your organizations</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Your role</th>
              <th scope="col">Plan</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
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
          </tbody>
        </table>
      </div>
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
          <div class="actions">
            <button type="submit" disabled={busy || !name.trim()}>
              Create organization
            </button>
          </div>
        </form>
        {message && <Notice kind={message.kind}>{message.text}</Notice>}
      </section>
    </>
  );
}
