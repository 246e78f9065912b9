// Hash routing: every screen lives at GET / (the only page the service serves), its address after the `#`
// (`/#/keys`, `/#/invite/TOKEN`), so reloads, bookmarks and the back button work without server routes.
import { useEffect, useState } from 'preact/hooks';

/** The path of a location hash: `#/keys?x=1` → `/keys`; empty → `/`. */
export function pathOf(hash: string): string {
  const path = hash.replace(/^#/, '').split('?')[0] ?? '';
  return path.startsWith('/') ? path : `/${path}`;
}

/** Splits a path into its segments: `/invite/abc` → `['invite', 'abc']`. */
export const segments = (path: string): string[] => path.split('/').filter(Boolean).map(decodeURIComponent);

/** The current path; re-renders on every hash change. */
export function useRoute(): string {
  const [path, setPath] = useState(() => pathOf(location.hash));
  useEffect(() => {
    const onChange = () => setPath(pathOf(location.hash));
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return path;
}

export const href = (path: string): string => `#${path}`;

export function navigate(path: string): void {
  location.hash = path;
}
