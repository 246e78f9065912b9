// Quality judging: the judge endpoint, the playground's score and the background `judge-sample` job.
// The LLM judge is metered like a translation; when the budget is reached or the upstream fails, the
// validator-based heuristic judge answers instead (labelled `heuristic`), so judging never fails a request.

import type { AppContext } from '../context.ts';
import { type NewReviewItem, reviewItems } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { JudgeInput, JudgeResult } from '../judge/index.ts';
import { estimateJudge, judgeTranslations } from '../judge/index.ts';
import { UpstreamError } from '../providers/index.ts';
import { validateTranslation } from '../validators/index.ts';
import { type MeteredCall, type MeterSubject, ORG_LIMITS_COLUMNS, type OrgLimits, orgSubject } from './metering.ts';
import type { JudgeSamplePayload } from './translate.ts';
import { priceOf } from './translate.ts';

/**
 * Judges `input` with the configured provider, metered against `subject`; falls back to the heuristic judge when
 * there is no LLM (pseudo), nobody pays, the budget is reached or the upstream fails.
 * @example const r = await meteredJudge(ctx, subject, keyId, 'judge', input);
 */
export async function meteredJudge(
  ctx: AppContext,
  subject: MeterSubject | null,
  apiKeyId: string | null,
  kind: 'judge' | 'playground',
  input: JudgeInput,
): Promise<JudgeResult> {
  if (ctx.provider.name === 'pseudo' || !subject) return judgeTranslations(ctx.heuristicProvider, input);
  let call: MeteredCall<JudgeResult>;
  try {
    call = await ctx.meter.meteredCall(subject, {
      estimate: estimateJudge(ctx.provider, input),
      price: priceOf(ctx, input.model),
      run: () => judgeTranslations(ctx.provider, input),
      usage: { apiKeyId, kind, model: input.model, items: input.items.length },
    });
  } catch (e) {
    if (e instanceof AppError && e.status === 402) return judgeTranslations(ctx.heuristicProvider, input);
    throw e;
  }
  if (call.result) return call.result;
  if (call.error instanceof UpstreamError) {
    ctx.log.warn({ reason: call.error.reason }, 'judge upstream failed; heuristic judge used');
    return judgeTranslations(ctx.heuristicProvider, input);
  }
  throw call.error;
}

/**
 * The `judge-sample` job: judges a sampled batch; every item of a batch scoring under the organization's
 * threshold becomes an open review item (the one place translated text is stored).
 */
export function judgeSampleHandler(ctx: AppContext) {
  return async (raw: unknown): Promise<void> => {
    const p = raw as JudgeSamplePayload;
    if (!p || !Array.isArray(p.items)) throw new Error('judge-sample: malformed payload');
    const [org] = await ctx.database.query<OrgLimits>(
      `SELECT o.id AS "orgId", ${ORG_LIMITS_COLUMNS} FROM organizations o JOIN plans p ON p.id = o.plan_id WHERE o.id = $1`,
      [p.orgId],
    );
    if (!org) return; // the organization is gone: nothing to review
    const subject = orgSubject(org);
    const input: JudgeInput = {
      sourceLocale: p.sourceLocale,
      targetLocale: p.targetLocale,
      items: p.items,
      glossary: p.glossary,
      style: p.style,
      model: ctx.config.models.judge,
    };
    const result = await meteredJudge(ctx, subject, null, 'judge', input);
    if (result.overall >= p.threshold) return;
    await ctx.database.db.insert(reviewItems).values(flaggedItems(p, result));
  };
}

/**
 * The review items of a flagged sample, one per item: its texts, the batch's glossary, the judge's scores, and what
 * the validators (ICU, placeholders and tags, glossary: the same as translate's) find in its target. An issue keeps
 * only `code` and `message`, which names arguments, tags or glossary terms of this item's own texts and glossary:
 * nothing of the batch's other items, contexts or style notes reaches the table.
 * @example await db.insert(reviewItems).values(flaggedItems(payload, judgeResult));
 */
export function flaggedItems(p: JudgeSamplePayload, result: JudgeResult): NewReviewItem[] {
  return p.items.map((item) => ({
    orgId: p.orgId,
    sourceLocale: p.sourceLocale,
    targetLocale: p.targetLocale,
    itemId: item.id,
    sourceText: item.source,
    targetText: item.target,
    isIcu: item.isIcu,
    glossary: p.glossary,
    model: p.model,
    scores: { ...result.scores, judge: result.judge },
    overall: result.overall,
    issues: validateTranslation({
      source: item.source,
      target: item.target,
      isIcu: item.isIcu,
      sourceLocale: p.sourceLocale,
      targetLocale: p.targetLocale,
      glossary: p.glossary,
    }).map(({ code, message }) => ({ code, message })),
  }));
}

/** The `usage-rollup` job: aggregates one UTC day of usage events into `usage_daily` (idempotent). */
export function usageRollupHandler(ctx: AppContext) {
  return async (raw: unknown): Promise<void> => {
    const day = (raw as { day?: unknown })?.day;
    if (typeof day !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error('usage-rollup: malformed payload');
    await ctx.database.query(
      `INSERT INTO usage_daily (org_id, day, kind, model, requests, tokens_in, tokens_out, cost_micros)
       SELECT COALESCE(org_id, 'playground'), $1::date, kind, model, count(*), sum(tokens_in), sum(tokens_out), sum(cost_micros)
         FROM usage_events
        WHERE created_at >= ($1::date::timestamp AT TIME ZONE 'UTC')
          AND created_at < (($1::date + 1)::timestamp AT TIME ZONE 'UTC')
        GROUP BY 1, kind, model
       ON CONFLICT (org_id, day, kind, model) DO UPDATE
         SET requests = EXCLUDED.requests, tokens_in = EXCLUDED.tokens_in,
             tokens_out = EXCLUDED.tokens_out, cost_micros = EXCLUDED.cost_micros`,
      [day],
    );
  };
}
