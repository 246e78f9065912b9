// The public playground: one string, at most 500 characters (a live counter), translated and scored live. The
// service's refusals (413 too long, 402 budget spent, 429 too many requests) are shown as sentences.
import { useId, useState } from 'preact/hooks';
import { charLength, PLAYGROUND_MAX_CHARS } from '../../../src/http/limits.ts';
import { playground } from '../api/endpoints.ts';
import type { PlaygroundResponse } from '../api/types.ts';
import { LocaleSelect } from '../components/locale-select.tsx';
import { Notice } from '../components/notice.tsx';
import { Scores } from '../components/scores.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { useAction } from '../lib/use-action.ts';

export function Playground() {
  const id = useId();
  const [source, setSource] = useState('');
  const [sourceLocale, setSourceLocale] = useState('en');
  const [targetLocale, setTargetLocale] = useState('de');
  const [result, setResult] = useState<PlaygroundResponse | null>(null);
  const { busy, message, submit } = useAction('playground');
  const length = charLength(source);
  const over = length - PLAYGROUND_MAX_CHARS;

  const translate = submit(async () => {
    setResult(null);
    setResult(await playground({ source, sourceLocale, targetLocale }));
  });

  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Try it: the public playground</h2>
      <p class="muted">One string at a time, up to {PLAYGROUND_MAX_CHARS} characters, no account needed.</p>
      <form onSubmit={translate} class="stack">
        <div class="field">
          <label for={`${id}-source`}>Text to translate</label>
          <textarea
            id={`${id}-source`}
            name="source"
            rows={4}
            required
            value={source}
            aria-describedby={`${id}-counter`}
            aria-invalid={over > 0}
            onInput={(e) => setSource(e.currentTarget.value)}
          />
          <p id={`${id}-counter`} class={over > 0 ? 'counter over' : 'counter'} aria-live="polite">
            {length} / {PLAYGROUND_MAX_CHARS} characters
            {over > 0 ? ` — ${over} over the limit` : ''}
          </p>
        </div>
        <div class="row">
          <LocaleSelect label="From" name="sourceLocale" value={sourceLocale} onChange={setSourceLocale} />
          <LocaleSelect label="To" name="targetLocale" value={targetLocale} onChange={setTargetLocale} />
        </div>
        <SubmitRow disabled={busy || length === 0}>{busy ? 'Translating…' : 'Translate'}</SubmitRow>
      </form>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {result && (
        <div class="result" aria-live="polite">
          <h3>Translation</h3>
          <p class="translation" lang={targetLocale}>
            {result.translation}
          </p>
          <Scores scores={result.scores} overall={result.score} judge={result.judge} />
          <p class="muted">Model: {result.model}</p>
        </div>
      )}
    </section>
  );
}
