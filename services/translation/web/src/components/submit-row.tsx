// A form's submit button, alone in the row of actions below the form's fields.
import type { ComponentChildren } from 'preact';

export function SubmitRow({ disabled, children }: { disabled: boolean; children: ComponentChildren }) {
  return (
    <div class="actions">
      <button type="submit" disabled={disabled}>
        {children}
      </button>
    </div>
  );
}
