// A message with its ICU arguments and syntax marked (for reading; see lib/icu-highlight.ts).
import { highlightIcu } from '../lib/icu-highlight.ts';

export function IcuText({ text }: { text: string }) {
  return (
    <span class="icu">
      {highlightIcu(text).map((s, i) =>
        s.kind === 'text' ? (
          s.text
        ) : (
          <mark key={i} class={`icu-${s.kind}`}>
            {s.text}
          </mark>
        ),
      )}
    </span>
  );
}
