// The signed-in state shared by every screen: who is signed in, their organizations, the one selected (kept in
// localStorage), and what to do when the session ends or an action needs a fresh MFA code.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me, Organization } from './api/types.ts';

export interface Session {
  me: Me;
  /** The selected organization (undefined when the user belongs to none). */
  org: Organization | undefined;
  selectOrg(orgId: string): void;
  /** Reads /api/v1/me again (after creating or joining an organization, MFA changes). */
  refresh(): Promise<void>;
  /** The service answered 401: back to the landing page. */
  ended(): void;
  /**
   * Runs `action`; when the service asks for a fresh MFA code (step-up), asks the person for one, verifies it and
   * runs `action` once more.
   */
  withStepUp<T>(action: () => Promise<T>): Promise<T>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in app');
  return session;
}

const ORG_KEY = 'scriptorium.org';

/** The organization to select: the remembered one if the user still belongs to it, else the first. */
export function pickOrg(orgs: Organization[], remembered: string | null): Organization | undefined {
  return orgs.find((o) => o.id === remembered) ?? orgs[0];
}

export const rememberedOrg = (): string | null => localStorage.getItem(ORG_KEY);
export const rememberOrg = (orgId: string): void => localStorage.setItem(ORG_KEY, orgId);

const INVITE_KEY = 'scriptorium.invite';

/**
 * The invite token of an invite link (`/?invite=TOKEN`), moved out of the address bar into this tab's session
 * storage, so it survives the sign-in round trip and stays out of the history.
 */
export function takeInviteFromUrl(): void {
  const url = new URL(location.href);
  const token = url.searchParams.get('invite');
  if (!token) return;
  sessionStorage.setItem(INVITE_KEY, token);
  url.searchParams.delete('invite');
  history.replaceState(null, '', `${url.pathname}${url.search}${url.hash || '#/invite'}`);
}

export const pendingInvite = (): string | null => sessionStorage.getItem(INVITE_KEY);
export const clearPendingInvite = (): void => sessionStorage.removeItem(INVITE_KEY);
