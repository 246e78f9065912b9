// Loading state for data the page fetches: a hook that runs an async function when its inputs change, and a
// component that shows "loading", the error, or its children with the value.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export type LoadState<T> = { value?: T; error?: string; loading: boolean };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): LoadState<T> {
  const [state, setState] = useState<LoadState<T>>({ loading: true });
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (value) => live && setState({ value, loading: false }),
      (err: Error) => live && setState({ error: err.message, loading: false }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

export function Load<T>({ state, children }: { state: LoadState<T>; children: (value: T) => ComponentChildren }) {
  if (state.error !== undefined)
    return (
      <p class="error" role="alert">
        {state.error}
      </p>
    );
  if (state.value === undefined) return <p aria-busy="true">Loading…</p>;
  return <>{children(state.value)}</>;
}

/**
 * Runs `step` now and again `everyMs` after each run ends, until the component goes away; `live()` tells a step
 * whether its results are still wanted. A step that throws reports through `onError` and the polling goes on.
 */
export function usePoll(
  step: (live: () => boolean) => Promise<void>,
  everyMs: number,
  onError: (message: string) => void,
) {
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const live = () => !stopped;
    const tick = async () => {
      try {
        await step(live);
      } catch (err) {
        if (!stopped) onError((err as Error).message);
      }
      if (!stopped) timer = setTimeout(tick, everyMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
}
