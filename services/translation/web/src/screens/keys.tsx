// API keys of the selected organization: create (the secret shown once, with a copy button), list with prefix,
// created and last used, revoke with a confirmation.
import { useId, useState } from 'preact/hooks';
import { keys as fetchKeys, issueKey, revokeKey } from '../api/endpoints.ts';
import type { ApiKeyView, KeyIssued } from '../api/types.ts';
import { ConfirmDialog } from '../components/confirm-dialog.tsx';
import { DataTable } from '../components/data-table.tsx';
import { LoadState } from '../components/load-state.tsx';
import { NoOrg } from '../components/no-org.tsx';
import { Notice } from '../components/notice.tsx';
import { ShownOnce } from '../components/shown-once.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { formatTime } from '../lib/format.ts';
import { allows } from '../lib/roles.ts';
import { href } from '../lib/router.ts';
import { useAction } from '../lib/use-action.ts';
import { useOrgResource } from '../lib/use-resource.ts';
import { useSession } from '../session.tsx';

export function Keys() {
  const session = useSession();
  const org = session.org;
  const id = useId();
  const list = useOrgResource(org?.id, fetchKeys, []);
  const [name, setName] = useState('');
  const [issued, setIssued] = useState<KeyIssued | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyView | null>(null);
  const { busy, message, run, submit } = useAction('session');
  if (!org) return <NoOrg />;
  const canIssue = allows(org.role, 'keys.issue');
  const canRevokeAny = allows(org.role, 'keys.revoke');

  const create = submit(async () => {
    const label = name.trim();
    setIssued(await session.withStepUp(() => issueKey({ orgId: org.id, ...(label ? { name: label } : {}) })));
    setName('');
    await list.reload();
  });

  const revoke = (key: ApiKeyView) =>
    run(async () => {
      await session.withStepUp(() => revokeKey(key.id));
      if (issued?.keyId === key.id) setIssued(null);
      await list.reload();
      return `Key ${key.prefix}… is revoked: requests with it are refused from now on.`;
    });

  const active = list.data?.filter((k) => !k.revokedAt) ?? [];
  const revoked = list.data?.filter((k) => k.revokedAt) ?? [];
  return (
    <>
      <h1>API keys of {org.name}</h1>
      <p class="muted">
        A key is a bearer credential: <code>Authorization: Bearer &lt;key&gt;</code> on{' '}
        <code>POST /api/v1/translate</code> and <code>/api/v1/judge</code>. To rotate one, create a new key, deploy it,
        then revoke the old one.
      </p>
      {canIssue ? (
        <section class="card" aria-labelledby={`${id}-new`}>
          <h2 id={`${id}-new`}>Create a key</h2>
          <form onSubmit={create} class="stack">
            <div class="field">
              <label for={`${id}-name`}>Name (optional)</label>
              <input
                id={`${id}-name`}
                maxLength={100}
                value={name}
                aria-describedby={`${id}-name-hint`}
                onInput={(e) => setName(e.currentTarget.value)}
              />
              <p id={`${id}-name-hint`} class="hint">
                Where the key is used, e.g. “CI” or “staging”.
              </p>
            </div>
            <SubmitRow disabled={busy}>Create key</SubmitRow>
          </form>
          {issued && (
            <ShownOnce
              kind="info"
              value={issued.apiKey}
              copyLabel="Copy the key"
              actions={
                <>
                  <a href={href('/try')}>Try it out</a>
                  <button type="button" class="secondary" onClick={() => setIssued(null)}>
                    I have saved it
                  </button>
                </>
              }
            >
              <p>
                <strong>Copy your new key now: you will not see this again.</strong> The service keeps only a hash of
                it.
              </p>
            </ShownOnce>
          )}
        </section>
      ) : (
        <p>Your role ({org.role}) cannot create keys for this organization; an admin or owner can.</p>
      )}
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      <LoadState resource={list} what="the keys" />
      {list.data && (
        <section aria-labelledby={`${id}-list`}>
          <h2 id={`${id}-list`}>Keys</h2>
          {active.length === 0 ? (
            <p>No active key.</p>
          ) : (
            <DataTable caption="Active keys" columns={['Key', 'Name', 'Created', 'Last used']} actions>
              {active.map((k) => (
                <tr key={k.id}>
                  <th scope="row">
                    <code class="nowrap">{k.prefix}…</code>
                  </th>
                  <td>{k.name ?? '—'}</td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{formatTime(k.lastUsedAt)}</td>
                  <td>
                    {(canRevokeAny || k.userId === session.me.id) && (
                      <button
                        type="button"
                        class="secondary"
                        aria-label={`Revoke ${k.prefix}…`}
                        disabled={busy}
                        onClick={() => setRevoking(k)}
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
          {revoked.length > 0 && (
            <details>
              <summary>Revoked keys ({revoked.length})</summary>
              <ul class="plain-list">
                {revoked.map((k) => (
                  <li key={k.id}>
                    <code>{k.prefix}…</code> {k.name ?? ''} — revoked {formatTime(k.revokedAt)}
                  </li>
                ))}
              </ul>
            </details>
          )}
        </section>
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke key ${revoking.prefix}…?`}
          confirmLabel="Revoke"
          danger
          onCancel={() => setRevoking(null)}
          onConfirm={() => {
            const k = revoking;
            setRevoking(null);
            void revoke(k);
          }}
        >
          <p>Every request with this key is refused (401) from now on. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
