// Translate with one of your keys: POST /api/v1/translate with the key pasted here (the service never shows a key
// twice, so the app cannot fill it in), showing the translations, the tokens used and the validators' verdict.
import { useId, useState } from 'preact/hooks';
import { translate } from '../api/endpoints.ts';
import type { TranslateResult } from '../api/types.ts';
import { IcuText } from '../components/icu-text.tsx';
import { LocaleSelect } from '../components/locale-select.tsx';
import { Notice } from '../components/notice.tsx';
import { SubmitRow } from '../components/submit-row.tsx';
import { formatInt } from '../lib/format.ts';
import { href } from '../lib/router.ts';
import { useAction } from '../lib/use-action.ts';

export function TryOut() {
  const id = useId();
  const [apiKey, setApiKey] = useState('');
  const [text, setText] = useState('');
  const [isIcu, setIsIcu] = useState(false);
  const [sourceLocale, setSourceLocale] = useState('en');
  const [targetLocale, setTargetLocale] = useState('de');
  const [tier, setTier] = useState<'cheap' | 'top'>('cheap');
  const [result, setResult] = useState<TranslateResult | null>(null);
  const { busy, message, submit } = useAction('translate');
  const lines = text.split('\n').filter((l) => l.trim());

  const send = submit(async () => {
    setResult(null);
    setResult(
      await translate(apiKey.trim(), {
        sourceLocale,
        targetLocale,
        tier,
        items: lines.map((line, i) => ({ id: `line-${i + 1}`, text: line, isIcu })),
        style: {},
        glossary: [],
      }),
    );
  });

  return (
    <>
      <h1>Try it</h1>
      <p class="muted">
        Translate with one of your API keys, as your application would. Each line is one string. Need a key? Create one
        under <a href={href('/keys')}>API keys</a>.
      </p>
      <form onSubmit={send} class="card stack">
        <div class="field">
          <label for={`${id}-key`}>API key</label>
          <input
            id={`${id}-key`}
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={apiKey}
            onInput={(e) => setApiKey(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for={`${id}-text`}>Strings to translate (one per line)</label>
          <textarea id={`${id}-text`} rows={4} required value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </div>
        <div class="checkbox">
          <input id={`${id}-icu`} type="checkbox" checked={isIcu} onChange={(e) => setIsIcu(e.currentTarget.checked)} />
          <label for={`${id}-icu`}>The strings are ICU messages</label>
        </div>
        <div class="row">
          <LocaleSelect label="From" name="sourceLocale" value={sourceLocale} onChange={setSourceLocale} />
          <LocaleSelect label="To" name="targetLocale" value={targetLocale} onChange={setTargetLocale} />
          <div class="field">
            <label for={`${id}-tier`}>Quality tier</label>
            <select id={`${id}-tier`} value={tier} onChange={(e) => setTier(e.currentTarget.value as 'cheap' | 'top')}>
              <option value="cheap">cheap</option>
              <option value="top">top</option>
            </select>
          </div>
        </div>
        <SubmitRow disabled={busy || lines.length === 0 || !apiKey.trim()}>
          {busy ? 'Translating…' : 'Translate'}
        </SubmitRow>
      </form>
      {message && <Notice kind={message.kind}>{message.text}</Notice>}
      {result && (
        <section class="result" aria-labelledby={`${id}-result`}>
          <h2 id={`${id}-result`}>Result</h2>
          <p>
            Model <strong>{result.model}</strong>: <strong>{formatInt(result.tokensIn)}</strong> tokens in,{' '}
            <strong>{formatInt(result.tokensOut)}</strong> tokens out.
          </p>
          {result.issues.length === 0 ? (
            <Notice kind="success">Validators: every translation passed (ICU, placeholders and tags, glossary).</Notice>
          ) : (
            <Notice kind="error">
              Validators: {result.issues.length} issue{result.issues.length === 1 ? '' : 's'} left after the retry.
              <ul>
                {result.issues.map((issue, i) => (
                  <li key={i}>
                    {issue.itemId ? `${issue.itemId}: ` : ''}
                    {issue.message} <code>{issue.code}</code>
                  </li>
                ))}
              </ul>
            </Notice>
          )}
          <ol class="translations">
            {result.translations.map((t) => (
              <li key={t.id} lang={targetLocale}>
                {isIcu ? <IcuText text={t.text} /> : t.text}
              </li>
            ))}
          </ol>
        </section>
      )}
    </>
  );
}
