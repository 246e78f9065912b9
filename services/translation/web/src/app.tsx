// The app: finds out whether someone is signed in (GET /api/v1/me), then shows the landing page or the signed-in
// layout (header with the organization switcher and sign-out, navigation, the screen for the current address).
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError } from './api/client.ts';
import { me as fetchMe, signOut } from './api/endpoints.ts';
import type { Me } from './api/types.ts';
import { Notice } from './components/notice.tsx';
import { StepUpDialog } from './components/step-up-dialog.tsx';
import { describeError, isStepUp } from './lib/messages.ts';
import { href, navigate, segments, useRoute } from './lib/router.ts';
import { Invite } from './screens/invite.tsx';
import { Keys } from './screens/keys.tsx';
import { Landing } from './screens/landing.tsx';
import { Members } from './screens/members.tsx';
import { Organizations } from './screens/organizations.tsx';
import { Reviews } from './screens/reviews.tsx';
import { Security } from './screens/security.tsx';
import { TryOut } from './screens/try-out.tsx';
import { Usage } from './screens/usage.tsx';
import {
  pendingInvite,
  pickOrg,
  rememberedOrg,
  rememberOrg,
  type Session,
  SessionContext,
  takeInviteFromUrl,
} from './session.tsx';

/** Moves focus to the main region (a button: a `#main` link would change the hash route). */
const skipToMain = () => document.getElementById('main')?.focus();

const NAV: { path: string; label: string }[] = [
  { path: '/', label: 'Overview' },
  { path: '/try', label: 'Try it' },
  { path: '/keys', label: 'API keys' },
  { path: '/members', label: 'Members' },
  { path: '/reviews', label: 'Reviews' },
  { path: '/organizations', label: 'Organizations' },
  { path: '/security', label: 'Security' },
];

function Screen({ path }: { path: string }) {
  const [first] = segments(path);
  switch (first) {
    case undefined:
      return <Usage />;
    case 'try':
      return <TryOut />;
    case 'keys':
      return <Keys />;
    case 'members':
      return <Members />;
    case 'reviews':
      return <Reviews />;
    case 'organizations':
      return <Organizations />;
    case 'security':
      return <Security />;
    case 'invite':
      return <Invite />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            There is no page at this address. <a href={href('/')}>Go to the overview</a>.
          </p>
        </>
      );
  }
}

function Shell({ session, children }: { session: Session; children: ComponentChildren }) {
  const path = useRoute();
  const [signingOut, setSigningOut] = useState(false);
  const main = useRef<HTMLElement>(null);
  // A new screen: move focus to its main region, as a page load would, so a screen reader starts there. In the
  // commit that renders the screen (a layout effect), so the screen never shows with focus left behind.
  const first = useRef(true);
  useLayoutEffect(() => {
    if (first.current) first.current = false;
    else main.current?.focus();
  }, [path]);
  // Back from signing in with an invitation pending in this tab: take the invitee to it.
  useEffect(() => {
    if (pendingInvite() && segments(location.hash.slice(1))[0] !== 'invite') navigate('/invite');
  }, []);
  const leave = async () => {
    setSigningOut(true);
    try {
      await signOut();
    } catch {
      // Signed out already, or the service is down: the page forgets the session either way.
    }
    session.ended();
  };
  return (
    <>
      <button type="button" class="skip" onClick={skipToMain}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href={href('/')}>
          Scriptorium
        </a>
        {session.me.organizations.length > 0 && (
          <div class="org-switch">
            <label for="org-switch">Organization</label>
            <select
              id="org-switch"
              value={session.org?.id ?? ''}
              onChange={(e) => session.selectOrg(e.currentTarget.value)}
            >
              {session.me.organizations.map((o) => (
                <option key={o.id} value={o.id}>
                  {o.name} ({o.role})
                </option>
              ))}
            </select>
          </div>
        )}
        <span class="who" title={session.me.email}>
          {session.me.name ?? session.me.email}
        </span>
        <button type="button" class="secondary" onClick={leave} disabled={signingOut}>
          Sign out
        </button>
      </header>
      <nav class="nav" aria-label="Main">
        <ul>
          {NAV.map((n) => (
            <li key={n.path}>
              <a href={href(n.path)} aria-current={path === n.path ? 'page' : undefined}>
                {n.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" class="page" tabIndex={-1} ref={main}>
        {children}
      </main>
    </>
  );
}

type State =
  | { kind: 'loading' }
  | { kind: 'signed-out'; notice?: string }
  | { kind: 'failed'; message: string }
  | { kind: 'signed-in'; me: Me };

export function App() {
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [orgId, setOrgId] = useState<string | null>(rememberedOrg);
  const [stepUp, setStepUp] = useState<((verified: boolean) => void) | null>(null);
  const path = useRoute();

  const load = useCallback(async () => {
    try {
      setState({ kind: 'signed-in', me: await fetchMe() });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setState({ kind: 'signed-out' });
      else setState({ kind: 'failed', message: describeError(e, 'session') });
    }
  }, []);

  useEffect(() => {
    takeInviteFromUrl();
    void load();
  }, [load]);

  const session = useMemo<Session | null>(() => {
    if (state.kind !== 'signed-in') return null;
    const org = pickOrg(state.me.organizations, orgId);
    return {
      me: state.me,
      org,
      selectOrg(id) {
        rememberOrg(id);
        setOrgId(id);
      },
      refresh: load,
      ended() {
        setState({ kind: 'signed-out', notice: 'You are signed out.' });
        navigate('/');
      },
      async withStepUp(action) {
        try {
          return await action();
        } catch (e) {
          if (!isStepUp(e)) throw e;
          const verified = await new Promise<boolean>((resolve) => setStepUp(() => resolve));
          setStepUp(null);
          if (!verified) throw e;
          return action();
        }
      },
    };
  }, [state, orgId, load]);

  if (state.kind === 'loading') return <p class="boot">Loading…</p>;
  if (state.kind === 'failed') {
    return (
      <main id="main" class="page">
        <h1>Scriptorium</h1>
        <Notice kind="error">{state.message}</Notice>
        <button type="button" onClick={load}>
          Try again
        </button>
      </main>
    );
  }
  if (state.kind === 'signed-out' || !session) {
    const invited = pendingInvite() !== null;
    return (
      <>
        <button type="button" class="skip" onClick={skipToMain}>
          Skip to content
        </button>
        <header class="top">
          <a class="brand" href={href('/')}>
            Scriptorium
          </a>
        </header>
        <Landing
          notice={
            invited
              ? 'You were invited to an organization. Sign in with GitHub to accept the invitation.'
              : state.kind === 'signed-out'
                ? state.notice
                : undefined
          }
        />
      </>
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell session={session}>
        <Screen path={path} />
      </Shell>
      {stepUp && <StepUpDialog onDone={stepUp} />}
    </SessionContext.Provider>
  );
}
