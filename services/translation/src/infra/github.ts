// GitHub's REST API as the sign-in needs it: who an OAuth access token belongs to (`GET /user`) and its verified primary
// e-mail address (`GET /user/emails`). Every answer is checked against the documented shape; anything else is a
// sign-in failure, never a crash.
import { z } from 'zod';
import { signInFailed } from '../errors.ts';

const GitHubUser = z.object({ id: z.number().int(), login: z.string(), name: z.string().nullable().optional() });
const GitHubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/** The account behind an access token: GitHub's id, the name to show, the verified primary e-mail. */
export interface GitHubAccount {
  githubId: string;
  name: string;
  email: string;
}

async function get(apiUrl: string, accessToken: string, path: string): Promise<unknown> {
  const response = await fetch(`${apiUrl}${path}`, {
    headers: {
      authorization: `Bearer ${accessToken}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'scriptorium-translation',
    },
    signal: AbortSignal.timeout(10_000),
  });
  if (!response.ok) throw signInFailed(`the identity provider refused ${path} (HTTP ${response.status})`);
  return response.json();
}

/**
 * Reads the account behind `accessToken` from the GitHub API at `apiUrl`.
 * @example const account = await gitHubAccount('https://api.github.com', token)
 */
export async function gitHubAccount(apiUrl: string, accessToken: string): Promise<GitHubAccount> {
  const profile = GitHubUser.safeParse(await get(apiUrl, accessToken, '/user'));
  if (!profile.success) throw signInFailed('the identity provider answered an unexpected user');
  const emails = GitHubEmails.safeParse(await get(apiUrl, accessToken, '/user/emails'));
  if (!emails.success) throw signInFailed('the identity provider answered unexpected e-mails');
  const primary = emails.data.find((e) => e.primary && e.verified);
  if (!primary) throw signInFailed('the GitHub account has no verified primary e-mail address');
  return { githubId: String(profile.data.id), name: profile.data.name ?? profile.data.login, email: primary.email };
}
