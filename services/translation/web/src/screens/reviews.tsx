// The review queue of the selected organization: the items the judge flagged, with source, target (ICU arguments
// marked), scores per dimension and validator issues; approve, edit (the 422's issues shown next to the text) or
// reject with a reason. Decided items are listed under their status.
import { useId, useState } from 'preact/hooks';
import { ApiError, type Issue } from '../api/client.ts';
import { actOnReview, reviews as fetchReviews } from '../api/endpoints.ts';
import type { ReviewItem, ReviewStatus } from '../api/types.ts';
import { IcuText } from '../components/icu-text.tsx';
import { LoadState } from '../components/load-state.tsx';
import { NoOrg } from '../components/no-org.tsx';
import { Notice } from '../components/notice.tsx';
import { type ScoreSet, Scores } from '../components/scores.tsx';
import { formatTime } from '../lib/format.ts';
import { describeError } from '../lib/messages.ts';
import { useOrgResource } from '../lib/use-resource.ts';
import { useSession } from '../session.tsx';

const STATUSES: { value: ReviewStatus; label: string }[] = [
  { value: 'open', label: 'To review' },
  { value: 'approved', label: 'Approved' },
  { value: 'edited', label: 'Edited' },
  { value: 'rejected', label: 'Rejected' },
];

const DIMENSIONS = ['accuracy', 'fluency', 'terminology', 'style', 'localeConventions'] as const;

/** The five dimension scores of an item, when all are numbers. */
function scoreSet(scores: Record<string, number | string>): ScoreSet | null {
  const out: Partial<ScoreSet> = {};
  for (const d of DIMENSIONS) {
    const v = scores[d];
    if (typeof v !== 'number') return null;
    out[d] = v;
  }
  return out as ScoreSet;
}

function Text({ text, icu, lang }: { text: string; icu: boolean; lang: string }) {
  return (
    <p class="translation" lang={lang}>
      {icu ? <IcuText text={text} /> : text}
    </p>
  );
}

function IssueList({ issues, id }: { issues: Issue[]; id?: string }) {
  return (
    <ul class="issues" id={id}>
      {issues.map((issue, i) => (
        <li key={i}>
          {issue.message} <code>{issue.code}</code>
        </li>
      ))}
    </ul>
  );
}

function ReviewCard({ item, onDecided }: { item: ReviewItem; onDecided: (message: string) => Promise<void> }) {
  const id = useId();
  const [mode, setMode] = useState<'view' | 'edit' | 'reject'>('view');
  const [text, setText] = useState(item.targetText);
  const [reason, setReason] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const scores = scoreSet(item.scores);
  const judge = typeof item.scores.judge === 'string' ? item.scores.judge : undefined;

  const send = async (action: Parameters<typeof actOnReview>[1], done: (r: ReviewItem) => string) => {
    setBusy(true);
    setError(null);
    setIssues([]);
    try {
      await onDecided(done(await actOnReview(item.id, action)));
    } catch (e) {
      if (e instanceof ApiError && e.status === 422) {
        setIssues(e.issues);
        setError('The edited text fails the validators: fix the issues listed under it and save again.');
      } else setError(describeError(e, 'session'));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="card review" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} class="review-title">
        {item.itemId}{' '}
        <span class="muted">
          ({item.sourceLocale} → {item.targetLocale})
        </span>
      </h2>
      <p class="muted">
        Flagged {formatTime(item.createdAt)} · model {item.model} · overall {item.overall.toFixed(1)} / 5
        {item.status !== 'open' && ` · ${item.status}${item.decidedAt ? ` ${formatTime(item.decidedAt)}` : ''}`}
      </p>
      <div class="review-texts">
        <div>
          <h3>Source</h3>
          <Text text={item.sourceText} icu={item.isIcu} lang={item.sourceLocale} />
        </div>
        <div>
          <h3>{item.status === 'open' ? 'Translation' : 'Final text'}</h3>
          {item.status === 'rejected' ? (
            <p>Rejected: {item.rejectReason}</p>
          ) : (
            <Text text={item.finalTarget ?? item.targetText} icu={item.isIcu} lang={item.targetLocale} />
          )}
        </div>
      </div>
      {scores && <Scores scores={scores} judge={judge} />}
      {item.issues.length > 0 && (
        <>
          {/* The findings are about the target as flagged, which an edit or a rejection no longer shows. */}
          <h3>
            {item.status === 'edited' || item.status === 'rejected'
              ? 'Validator issues of the flagged translation'
              : 'Validator issues'}
          </h3>
          <IssueList issues={item.issues} />
        </>
      )}
      {item.status === 'open' && mode === 'view' && (
        <div class="actions">
          <button
            type="button"
            disabled={busy}
            onClick={() => send({ type: 'approve' }, () => `Approved ${item.itemId}: the translation stands.`)}
          >
            Approve
          </button>
          <button type="button" class="secondary" onClick={() => setMode('edit')}>
            Edit
          </button>
          <button type="button" class="secondary" onClick={() => setMode('reject')}>
            Reject
          </button>
        </div>
      )}
      {mode === 'edit' && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void send({ type: 'edit', text }, (r) => `Saved ${item.itemId}: “${r.finalTarget ?? ''}”.`);
          }}
        >
          <div class="field">
            <label for={`${id}-edit`}>Corrected translation</label>
            <textarea
              id={`${id}-edit`}
              rows={3}
              lang={item.targetLocale}
              value={text}
              aria-invalid={issues.length > 0}
              aria-describedby={`${id}-preview${issues.length ? ` ${id}-issues` : ''}`}
              onInput={(e) => setText(e.currentTarget.value)}
            />
            {item.isIcu && (
              <p id={`${id}-preview`} class="hint">
                ICU arguments: <IcuText text={text} />
              </p>
            )}
            {issues.length > 0 && <IssueList issues={issues} id={`${id}-issues`} />}
          </div>
          {error && <Notice kind="error">{error}</Notice>}
          <div class="actions">
            <button type="submit" disabled={busy || !text.trim()}>
              Save the edit
            </button>
            <button type="button" class="secondary" onClick={() => setMode('view')}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {mode === 'reject' && (
        <form
          class="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void send({ type: 'reject', reason: reason.trim() }, () => `Rejected ${item.itemId}.`);
          }}
        >
          <div class="field">
            <label for={`${id}-reason`}>Reason for rejecting</label>
            <textarea
              id={`${id}-reason`}
              rows={2}
              required
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
          </div>
          {error && <Notice kind="error">{error}</Notice>}
          <div class="actions">
            <button type="submit" class="danger" disabled={busy || !reason.trim()}>
              Reject
            </button>
            <button type="button" class="secondary" onClick={() => setMode('view')}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {mode === 'view' && error && <Notice kind="error">{error}</Notice>}
    </article>
  );
}

export function Reviews() {
  const session = useSession();
  const org = session.org;
  const [status, setStatus] = useState<ReviewStatus>('open');
  const [message, setMessage] = useState<string | null>(null);
  const list = useOrgResource(org?.id, (orgId) => fetchReviews(orgId, status), [], [status]);
  if (!org) return <NoOrg />;
  return (
    <>
      <h1>Review queue of {org.name}</h1>
      <fieldset class="segmented">
        <legend class="sr-only">Show</legend>
        {STATUSES.map((s) => (
          <button
            key={s.value}
            type="button"
            class={s.value === status ? '' : 'secondary'}
            aria-pressed={s.value === status}
            onClick={() => {
              setMessage(null);
              setStatus(s.value);
            }}
          >
            {s.label}
          </button>
        ))}
      </fieldset>
      {message && <Notice kind="success">{message}</Notice>}
      <LoadState resource={list} what="the review queue" />
      {list.data?.length === 0 && (
        <p>{status === 'open' ? 'Nothing to review: the judge flagged no translation.' : 'No item here.'}</p>
      )}
      {list.data?.map((item) => (
        <ReviewCard
          key={item.id}
          item={item}
          onDecided={async (m) => {
            // Said once the list shows the change.
            await list.reload();
            setMessage(m);
          }}
        />
      ))}
    </>
  );
}
