// Asks for the current code of the person's authenticator app when the service wants a fresh MFA check (issuing or
// revoking a key, deleting the account), and verifies it.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { mfaVerify } from '../api/endpoints.ts';
import { describeError } from '../lib/messages.ts';
import { CodeField } from './code-field.tsx';
import { Notice } from './notice.tsx';

export function StepUpDialog({ onDone }: { onDone: (verified: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await mfaVerify(code.trim());
      onDone(true);
    } catch (err) {
      setError(describeError(err, 'mfa'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={`${id}-title`} onCancel={() => onDone(false)}>
      <form onSubmit={submit}>
        <h2 id={`${id}-title`}>Confirm it is you</h2>
        <p>This needs a fresh check of your second factor. Enter the 6-digit code your authenticator app shows now.</p>
        <CodeField label="Authentication code" value={code} onInput={setCode} />
        {error && <Notice kind="error">{error}</Notice>}
        <div class="actions">
          <button type="button" class="secondary" onClick={() => onDone(false)}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            Verify
          </button>
        </div>
      </form>
    </dialog>
  );
}
