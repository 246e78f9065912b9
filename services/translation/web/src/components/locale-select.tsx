import { useId } from 'preact/hooks';
import { LOCALES } from '../lib/locales.ts';

export function LocaleSelect(props: { label: string; value: string; onChange: (code: string) => void; name: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name} value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {LOCALES.map((l) => (
          <option key={l.code} value={l.code}>
            {l.name} ({l.code})
          </option>
        ))}
      </select>
    </div>
  );
}
