// What a screen shows while its data loads or when loading failed (with a retry); a 401 ends the session.
import { useEffect } from 'preact/hooks';
import { ApiError } from '../api/client.ts';
import { describeError } from '../lib/messages.ts';
import type { Resource } from '../lib/use-resource.ts';
import { useSession } from '../session.tsx';
import { Notice } from './notice.tsx';

export function LoadState({ resource, what }: { resource: Resource<unknown>; what: string }) {
  const session = useSession();
  const { error, loading, data } = resource;
  const ended = error instanceof ApiError && error.status === 401;
  useEffect(() => {
    if (ended) session.ended();
  }, [ended, session]);
  if (error && !ended) {
    return (
      <Notice kind="error">
        Could not load {what}. {describeError(error, 'session')}{' '}
        <button type="button" class="link" onClick={() => void resource.reload()}>
          Try again
        </button>
      </Notice>
    );
  }
  if (loading && data === undefined) return <p class="muted">Loading {what}…</p>;
  return null;
}
