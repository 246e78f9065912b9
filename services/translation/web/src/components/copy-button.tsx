// Copies a text to the clipboard and says so; where the clipboard is refused, selects the text to copy by hand.
import { useState } from 'preact/hooks';

export function CopyButton({ text, label = 'Copy', targetId }: { text: string; label?: string; targetId?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
      const target = targetId ? document.getElementById(targetId) : null;
      if (target) getSelection()?.selectAllChildren(target);
    }
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span role="status" class="copy-state">
        {state === 'copied' ? 'Copied.' : state === 'failed' ? 'Copy by hand: the text is selected.' : ''}
      </span>
    </span>
  );
}
