// Who signed in: the user row created or linked for the GitHub account behind an OAuth access token (infra/github.ts
// reads the account; the e-mail is its verified primary address).
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import { users } from '../db/schema.ts';
import { gitHubAccount } from '../infra/github.ts';
import { audit } from './audit.ts';

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
  const { githubId, name, email } = await gitHubAccount(ctx.config.oauth!.apiUrl, accessToken);
  return ctx.database.db.transaction(async (tx) => {
    const [existing] = await tx
      .select({ id: users.id })
      .from(users)
      .where(
        and(
          isNull(users.deletedAt),
          or(eq(users.githubId, githubId), and(isNull(users.githubId), sql`lower(${users.email}) = lower(${email})`)),
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
          email: sql`CASE WHEN EXISTS (SELECT 1 FROM users o WHERE lower(o.email) = lower(${email}) AND o.id <> ${userId}) THEN ${users.email} ELSE ${email} END`,
        })
        .where(eq(users.id, userId));
    } else {
      const [row] = await tx.insert(users).values({ email, name, githubId }).returning({ id: users.id });
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
