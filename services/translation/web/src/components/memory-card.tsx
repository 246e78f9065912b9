// The selected organization's translation memory: whether it is on and how many entries it holds (members see it),
// and the switch (admins and owners; turning it off deletes every entry, after a confirmation).
import { useId, useState } from 'preact/hooks';
import { memory, setMemory } from '../api/endpoints.ts';
import type { Organization } from '../api/types.ts';
import { allows } from '../lib/roles.ts';
import { useAction } from '../lib/use-action.ts';
import { useResource } from '../lib/use-resource.ts';
import { ConfirmDialog } from './confirm-dialog.tsx';
import { LoadState } from './load-state.tsx';
import { Notice } from './notice.tsx';

export function MemoryCard({ org }: { org: Organization }) {
  const id = useId();
  const status = useResource(() => memory(org.id), [org.id]);
  const [confirmOff, setConfirmOff] = useState(false);
  const { busy, message, run } = useAction('session');
  const mayManage = allows(org.role, 'memory.manage');
  const apply = (enabled: boolean) =>
    run(async () => {
      await setMemory(org.id, enabled);
      await status.reload();
      return enabled ? 'The translation memory is on.' : 'The translation memory is off and its entries are deleted.';
    });
  const data = status.data;
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Translation memory of {org.name}</h2>
      <p class="muted">
        Off by default: nothing is kept. When on, translations that passed the checks and review results are kept for
        this organization only, and the same text is answered again without a provider call and without tokens.
      </p>
      <LoadState resource={status} what="the translation memory" />
      {data && (
        <div class="stack">
          <p role="status">
            {data.enabled ? 'On' : 'Off'} · <strong>{data.entries.toLocaleString('en')}</strong>{' '}
            {data.entries === 1 ? 'entry' : 'entries'}
          </p>
          {mayManage ? (
            <div class="checkbox">
              <input
                id={`${id}-switch`}
                type="checkbox"
                role="switch"
                checked={data.enabled}
                aria-checked={data.enabled}
                disabled={busy}
                aria-describedby={`${id}-title`}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  e.currentTarget.checked = data.enabled;
                  if (on) void apply(true);
                  else setConfirmOff(true);
                }}
              />
              <label for={`${id}-switch`}>Keep a translation memory</label>
            </div>
          ) : (
            <p class="muted">Admins and owners turn it on or off.</p>
          )}
        </div>
      )}
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {confirmOff && data && (
        <ConfirmDialog
          title="Turn the translation memory off?"
          confirmLabel="Turn off and delete"
          danger
          onCancel={() => setConfirmOff(false)}
          onConfirm={() => {
            setConfirmOff(false);
            void apply(false);
          }}
        >
          <p>
            Its {data.entries.toLocaleString('en')} {data.entries === 1 ? 'entry is' : 'entries are'} deleted at once;
            this cannot be undone. Export it as TMX first to keep a copy.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
