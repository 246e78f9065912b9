// One typed function per route the app calls.
import { call, download } from './client.ts';
import type {
  ApiKeyView,
  Invite,
  InviteCreated,
  InviteRequest,
  KeyIssued,
  KeyIssueRequest,
  Me,
  Member,
  MemoryStatus,
  MfaResult,
  Organization,
  PlaygroundRequest,
  PlaygroundResponse,
  PrivacyDeleteResult,
  ReviewAction,
  ReviewItem,
  ReviewStatus,
  Role,
  TranslateBatch,
  TranslateResult,
  Usage,
} from './types.ts';

const enc = encodeURIComponent;

export const playground = (body: PlaygroundRequest) => call<PlaygroundResponse>('POST', '/api/v1/playground', body);
export const translate = (apiKey: string, body: TranslateBatch) =>
  call<TranslateResult>('POST', '/api/v1/translate', body, { apiKey });

/** Where the browser goes to sign in (a navigation, not a fetch: the OAuth flow redirects). */
export const SIGN_IN_URL = '/auth/github';
export const signOut = () => call<unknown>('POST', '/auth/logout');
export const me = () => call<Me>('GET', '/api/v1/me');

export const createOrganization = (name: string) => call<Organization>('POST', '/api/v1/orgs', { name });
export const members = (orgId: string) =>
  call<{ members: Member[] }>('GET', `/api/v1/orgs/${enc(orgId)}/members`).then((r) => r.members);
export const invite = (orgId: string, body: InviteRequest) =>
  call<InviteCreated>('POST', `/api/v1/orgs/${enc(orgId)}/members`, body);
export const invites = (orgId: string) =>
  call<{ invites: Invite[] }>('GET', `/api/v1/orgs/${enc(orgId)}/invites`).then((r) => r.invites);
export const withdrawInvite = (orgId: string, inviteId: string) =>
  call<unknown>('DELETE', `/api/v1/orgs/${enc(orgId)}/invites/${enc(inviteId)}`);
export const changeRole = (orgId: string, userId: string, role: Role) =>
  call<unknown>('PATCH', `/api/v1/orgs/${enc(orgId)}/members/${enc(userId)}`, { role });
export const removeMember = (orgId: string, userId: string) =>
  call<unknown>('DELETE', `/api/v1/orgs/${enc(orgId)}/members/${enc(userId)}`);
export const acceptInvite = (token: string) => call<Organization>('POST', '/api/v1/invites/accept', { token });
export const usage = (orgId: string) => call<Usage>('GET', `/api/v1/orgs/${enc(orgId)}/usage`);
export const memory = (orgId: string) => call<MemoryStatus>('GET', `/api/v1/orgs/${enc(orgId)}/memory`);
export const setMemory = (orgId: string, enabled: boolean) =>
  call<MemoryStatus>('PUT', `/api/v1/orgs/${enc(orgId)}/memory`, { enabled });

export const issueKey = (body: KeyIssueRequest) => call<KeyIssued>('POST', '/api/v1/keys', body);
export const keys = (orgId: string) =>
  call<{ keys: ApiKeyView[] }>('GET', `/api/v1/keys?orgId=${enc(orgId)}`).then((r) => r.keys);
export const revokeKey = (keyId: string) => call<unknown>('DELETE', `/api/v1/keys/${enc(keyId)}`);

export const reviews = (orgId: string, status: ReviewStatus) =>
  call<{ items: ReviewItem[] }>('GET', `/api/v1/reviews?orgId=${enc(orgId)}&status=${enc(status)}`).then(
    (r) => r.items,
  );
export const actOnReview = (id: string, action: ReviewAction) =>
  call<ReviewItem>('POST', `/api/v1/reviews/${enc(id)}`, action);

export const mfaEnroll = () => call<MfaResult>('POST', '/api/v1/mfa', { action: 'enroll' });
export const mfaVerify = (code: string) => call<MfaResult>('POST', '/api/v1/mfa', { action: 'verify', code });

export const privacyExport = () => download('POST', '/api/v1/privacy/export');
export const privacyDelete = () => call<PrivacyDeleteResult>('POST', '/api/v1/privacy/delete');
