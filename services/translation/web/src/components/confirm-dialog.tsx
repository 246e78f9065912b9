// A modal confirmation (the native <dialog>: focus moves into it, Escape cancels, focus returns afterwards). With
// `typed`, the confirm button stays disabled until that exact text is typed.
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

export interface ConfirmProps {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** The text the person must type to enable the confirm button. */
  typed?: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

export function ConfirmDialog({ title, children, confirmLabel, typed, danger, onConfirm, onCancel }: ConfirmProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState('');
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  const ready = typed === undefined || text === typed;
  return (
    <dialog ref={ref} aria-labelledby={`${id}-title`} onCancel={onCancel} class="dialog">
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ready) onConfirm();
        }}
      >
        <h2 id={`${id}-title`}>{title}</h2>
        {children}
        {typed !== undefined && (
          <div class="field">
            <label for={`${id}-typed`}>
              Type <strong>{typed}</strong> to confirm
            </label>
            <input id={`${id}-typed`} autocomplete="off" value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </div>
        )}
        <div class="actions">
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
          <button type="submit" class={danger ? 'danger' : ''} disabled={!ready}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
