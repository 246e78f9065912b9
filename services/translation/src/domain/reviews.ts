// Review items (opened by the background judge) and the actions on them. Statuses: `open` → `approved` | `edited` |
// `rejected`; only an open item can be decided (409 otherwise). An item of an organization the caller is not a member
// of is 404, like an unknown one.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../context.ts';
import type { ReviewItem } from '../db/schema.ts';
import { AppError, conflict, notFound } from '../errors.ts';
import type { GlossaryEntry, ValidationIssue } from '../language/index.ts';
import { validateTranslation } from '../validators/index.ts';
import { audit } from './audit.ts';
import { remember } from './memory.ts';
import type { Actor } from './orgs.ts';
import { allows, type Role } from './role-table.ts';
import { authorize } from './roles.ts';

export const REVIEW_STATUSES = ['open', 'approved', 'edited', 'rejected'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

export type ReviewAction = { type: 'approve' } | { type: 'edit'; text: string } | { type: 'reject'; reason: string };

export type ReviewView = Pick<
  ReviewItem,
  | 'id'
  | 'orgId'
  | 'sourceLocale'
  | 'targetLocale'
  | 'itemId'
  | 'sourceText'
  | 'targetText'
  | 'isIcu'
  | 'model'
  | 'overall'
  | 'issues'
  | 'finalTarget'
  | 'rejectReason'
  | 'decidedBy'
  | 'decidedAt'
  | 'createdAt'
> & { status: ReviewStatus; scores: Record<string, number | string>; glossary: GlossaryEntry[] };

/** The edited text failed the validators (422 with the list of issues). */
export class ValidationFailed extends AppError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super('validation_failed', 422, 'the edited text fails the validators', {}, { issues });
    this.issues = issues;
  }
}

const COLUMNS = `r.id, r.org_id AS "orgId", r.source_locale AS "sourceLocale", r.target_locale AS "targetLocale",
  r.item_id AS "itemId", r.source_text AS "sourceText", r.target_text AS "targetText", r.is_icu AS "isIcu",
  r.glossary, r.model, r.scores, r.overall, r.issues, r.status, r.final_target AS "finalTarget",
  r.reject_reason AS "rejectReason", r.decided_by AS "decidedBy", r.decided_at AS "decidedAt",
  r.created_at AS "createdAt"`;

/** The review queue of `orgId` (members), newest first; by default the open items. */
export async function listReviews(
  ctx: AppContext,
  actor: Actor,
  orgId: string,
  opts: { status?: ReviewStatus; limit?: number } = {},
): Promise<ReviewView[]> {
  await authorize(ctx.database, orgId, actor.userId, 'reviews.act');
  return ctx.database.query<ReviewView>(
    `SELECT ${COLUMNS} FROM review_items r WHERE r.org_id = $1 AND r.status = $2
      ORDER BY r.created_at DESC, r.id LIMIT $3`,
    [orgId, opts.status ?? 'open', opts.limit ?? 100],
  );
}

/**
 * Applies `action` to review item `id`: approve (the target stands), edit (the new text must pass the same
 * validators as translate: ICU, placeholders and tags, the item's glossary — else 422 with the issues) or reject
 * (with a reason). Returns the item with its new status and `finalTarget` (null when rejected).
 */
export async function actOnReview(
  ctx: AppContext,
  actor: Actor,
  id: string,
  action: ReviewAction,
): Promise<ReviewView> {
  const [item] = await ctx.database.query<ReviewView & { role: Role | null }>(
    `SELECT ${COLUMNS}, m.role FROM review_items r
       LEFT JOIN memberships m ON m.org_id = r.org_id AND m.user_id = $2
      WHERE r.id = $1`,
    [id, actor.userId],
  );
  if (!item?.role || !allows(item.role, 'reviews.act')) throw notFound('review item not found');
  if (item.status !== 'open') throw conflict(`the review item is already ${item.status}`);
  let finalTarget: string | null = item.targetText;
  if (action.type === 'edit') {
    const issues = validateTranslation({
      source: item.sourceText,
      target: action.text,
      isIcu: item.isIcu,
      sourceLocale: item.sourceLocale,
      targetLocale: item.targetLocale,
      glossary: item.glossary,
    });
    if (issues.length > 0) throw new ValidationFailed(issues);
    finalTarget = action.text;
  } else if (action.type === 'reject') {
    finalTarget = null;
  }
  const status: ReviewStatus = action.type === 'approve' ? 'approved' : action.type === 'edit' ? 'edited' : 'rejected';
  const decidedAt = new Date(ctx.now()).toISOString();
  const updated = await ctx.database.db.transaction(async (tx) => {
    const rows = await tx.execute(sql`UPDATE review_items
         SET status = ${status}, final_target = ${finalTarget}, decided_by = ${actor.userId}, decided_at = ${decidedAt},
             reject_reason = ${action.type === 'reject' ? action.reason : null}
       WHERE id = ${id} AND status = 'open' RETURNING id`);
    if ((rows as { rows?: unknown[] }).rows?.length !== 1) return false;
    await audit(tx, {
      actorUserId: actor.userId,
      actorKind: 'user',
      orgId: item.orgId,
      action: `review.${action.type}`,
      target: id,
      requestId: actor.requestId ?? null,
    });
    return true;
  });
  // Decided by someone else between the read and the write.
  if (!updated) throw conflict('the review item was decided meanwhile');
  if (finalTarget !== null) {
    // An approved or edited result goes to the organization's translation memory (a no-op while it is off).
    await remember(
      ctx.database,
      item.orgId,
      item,
      [{ text: item.sourceText, isIcu: item.isIcu, target: finalTarget }],
      'review',
      actor.userId,
    );
  }
  const [after] = await ctx.database.query<ReviewView>(`SELECT ${COLUMNS} FROM review_items r WHERE r.id = $1`, [id]);
  return after!;
}
