// Loads data for a screen: the value, the error, whether it is loading, and a reload. Re-runs when `deps` change; an
// answer that arrives after a newer request started is dropped.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine === generation.current) {
        setData(value);
        setError(undefined);
      }
    } catch (e) {
      if (mine === generation.current) setError(e);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload };
}

/**
 * Data of the selected organization: `load(orgId)`, loaded again when the selection or `deps` change; `none` while
 * no organization is selected.
 * @example const keys = useOrgResource(session.org?.id, fetchKeys, []);
 */
export function useOrgResource<T>(
  orgId: string | undefined,
  load: (orgId: string) => Promise<T>,
  none: T,
  deps: unknown[] = [],
): Resource<T> {
  return useResource(() => (orgId ? load(orgId) : Promise.resolve(none)), [orgId, ...deps]);
}
