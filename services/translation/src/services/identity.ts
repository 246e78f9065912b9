// Who signed in: GitHub's REST API (`GET /user`, `GET /user/emails`) read with the OAuth access token, and the user
// row created or linked by GitHub id. The e-mail is the verified primary address.
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { users } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { audit } from './audit.ts';

const GitHubUser = z.object({ id: z.number().int(), login: z.string(), name: z.string().nullable().optional() });
const GitHubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/** The identity provider did not answer as documented, or the account has no verified primary e-mail. */
export const signInFailed = (message: string) => new AppError('sign_in_failed', 401, message);

async function github(ctx: AppContext, accessToken: string, path: string): Promise<unknown> {
  const response = await fetch(`${ctx.config.oauth!.apiUrl}${path}`, {
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

export interface SignedInUser {
  userId: string;
  created: boolean;
}

/**
 * Reads the GitHub account behind `accessToken` and returns the user it is (created on first sign-in; an existing
 * user with the same verified e-mail and no GitHub id yet — made by the `keys create` CLI — is linked).
 */
export async function signInWithGitHub(
  ctx: AppContext,
  accessToken: string,
  requestId?: string,
): Promise<SignedInUser> {
  const profile = GitHubUser.safeParse(await github(ctx, accessToken, '/user'));
  if (!profile.success) throw signInFailed('the identity provider answered an unexpected user');
  const emails = GitHubEmails.safeParse(await github(ctx, accessToken, '/user/emails'));
  if (!emails.success) throw signInFailed('the identity provider answered unexpected e-mails');
  const primary = emails.data.find((e) => e.primary && e.verified);
  if (!primary) throw signInFailed('the GitHub account has no verified primary e-mail address');
  const githubId = String(profile.data.id);
  const name = profile.data.name ?? profile.data.login;
  return ctx.database.db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ id: users.id })
      .from(users)
      .where(
        and(
          isNull(users.deletedAt),
          or(
            eq(users.githubId, githubId),
            and(isNull(users.githubId), sql`lower(${users.email}) = lower(${primary.email})`),
          ),
        ),
      )
      .orderBy(sql`${users.githubId} IS NULL`)
      .limit(1)
      .for('update');
    let userId: string;
    const created = !existing;
    if (existing) {
      userId = existing.id;
      // The e-mail follows GitHub's primary address, unless another user already has that address.
      await tx
        .update(users)
        .set({
          githubId,
          name,
          email: sql`CASE WHEN EXISTS (SELECT 1 FROM users o WHERE lower(o.email) = lower(${primary.email}) AND o.id <> ${userId}) THEN ${users.email} ELSE ${primary.email} END`,
        })
        .where(eq(users.id, userId));
    } else {
      const [row] = await tx.insert(users).values({ email: primary.email, name, githubId }).returning({ id: users.id });
      userId = row!.id;
    }
    await audit(tx, {
      actorUserId: userId,
      actorKind: 'user',
      action: 'session.sign_in',
      target: userId,
      requestId: requestId ?? null,
      meta: { created },
    });
    return { userId, created };
  });
}
