// The field for a one-time code of an authenticator app (6 digits; the phone's numeric keyboard and one-time-code
// autofill).
import { useId } from 'preact/hooks';

export function CodeField({ label, value, onInput }: { label: string; value: string; onInput: (v: string) => void }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        inputMode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]{6}"
        maxLength={6}
        required
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </div>
  );
}
