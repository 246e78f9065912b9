// Translate orchestration: resolve the model, reserve quota and budget, call the provider, validate,
// retry once with the issues as feedback, settle with the reported usage, maybe sample for background judging.

import type { AppContext } from '../context.ts';
import type { FineTunedModel } from '../db/schema.ts';
import { AppError, forbidden, upstreamFailed } from '../errors.ts';
import type { TranslateBatch, TranslateResult } from '../http/schemas.ts';
import type { TranslateItem, ValidationIssue } from '../language/index.ts';
import type { ProviderRequest, ProviderResult } from '../providers/index.ts';
import { UpstreamError } from '../providers/index.ts';
import { isRetryable, validateBatch } from '../validators/index.ts';
import type { Principal } from './accounts.ts';
import { enqueue } from './jobs.ts';
import { type MeteredCall, type MeterSubject, orgSubject, type Price, type RateLimitGate } from './meter.ts';

export interface ResolvedModel {
  /** Model name sent upstream. */
  upstream: string;
  /** Model name reported to the client. */
  reported: string | null;
  price: Price;
}

export const priceOf = (ctx: AppContext, model: string): Price => ctx.config.prices[model] ?? ctx.config.defaultPrice;

/**
 * Tier → configured model; `modelOverride` → a fine-tuned model of the caller's organization, else 403
 * (also when it does not exist: the answer never discloses whether another organization's model exists).
 */
export async function resolveModel(
  ctx: AppContext,
  orgId: string,
  tier: 'cheap' | 'top',
  modelOverride: string | undefined,
): Promise<ResolvedModel> {
  if (modelOverride === undefined) {
    const upstream = ctx.config.models[tier];
    return { upstream, reported: null, price: priceOf(ctx, upstream) };
  }
  const [row] = await ctx.database.query<
    Pick<FineTunedModel, 'orgId' | 'upstreamModel' | 'priceInMicros' | 'priceOutMicros'>
  >(
    `SELECT org_id AS "orgId", upstream_model AS "upstreamModel", price_in_micros AS "priceInMicros",
            price_out_micros AS "priceOutMicros" FROM fine_tuned_models WHERE id = $1`,
    [modelOverride],
  );
  if (!row || row.orgId !== orgId) throw forbidden('modelOverride is not a model this organization may use');
  return {
    upstream: row.upstreamModel,
    reported: modelOverride,
    price: { in: row.priceInMicros, out: row.priceOutMicros },
  };
}

/**
 * One metered provider call: reserve (throws 402), translate, settle with the reported usage (or release on failure).
 * Never throws for an upstream failure: returns it, so callers decide (502, or keep an earlier result).
 */
export async function meteredTranslate(
  ctx: AppContext,
  subject: MeterSubject,
  apiKeyId: string | null,
  kind: 'translate' | 'playground',
  req: ProviderRequest,
  price: Price,
  gate?: RateLimitGate,
): Promise<MeteredCall<ProviderResult>> {
  const call = await ctx.meter.meteredCall(subject, {
    estimate: ctx.provider.estimateTranslate(req),
    price,
    run: () => ctx.provider.translate(req),
    usage: { apiKeyId, kind, model: req.model, items: req.items.length },
    ...(gate ? { gate } : {}),
  });
  if (call.error !== undefined && !(call.error instanceof UpstreamError)) throw call.error;
  return call;
}

function validateAll(batch: TranslateBatch, texts: Map<string, string>): ValidationIssue[] {
  return validateBatch(
    batch.items.map((item) => ({
      id: item.id,
      source: item.text,
      target: texts.get(item.id) ?? '',
      isIcu: item.isIcu === true,
    })),
    { sourceLocale: batch.sourceLocale, targetLocale: batch.targetLocale, glossary: batch.glossary },
  );
}

/**
 * Translates a batch for an API-key caller.
 * @example const result = await translateBatch(ctx, principal, batch);
 */
export async function translateBatch(
  ctx: AppContext,
  principal: Principal,
  batch: TranslateBatch,
  gate?: RateLimitGate,
): Promise<TranslateResult> {
  const model = await resolveModel(ctx, principal.orgId, batch.tier, batch.modelOverride);
  const subject = orgSubject(principal);
  const items: TranslateItem[] = batch.items;
  const req: ProviderRequest = {
    sourceLocale: batch.sourceLocale,
    targetLocale: batch.targetLocale,
    items,
    style: batch.style,
    glossary: batch.glossary,
    model: model.upstream,
  };
  // The rate-limit hit rides with the first reservation (one round trip); the retry is not a new request.
  const first = await meteredTranslate(ctx, subject, principal.keyId, 'translate', req, model.price, gate);
  if (!first.result) throw upstreamFailed();
  let tokensIn = first.result.tokensIn;
  let tokensOut = first.result.tokensOut;
  const texts = new Map(first.result.translations.map((t) => [t.id, t.text]));
  let issues = validateAll(batch, texts);

  const retryable = issues.filter(isRetryable);
  if (retryable.length > 0) {
    // One retry of the failing items, with their issues as feedback. Issues of the client's own source (invalid
    // ICU, unknown locale) are not retried: asking again cannot fix them. A 402 or upstream failure here keeps the
    // first answer, with its issues flagged.
    const failing = new Set(retryable.map((i) => i.itemId));
    const retryReq: ProviderRequest = {
      ...req,
      items: items.filter((i) => failing.has(i.id)),
      feedback: retryable.filter((i) => failing.has(i.itemId)),
    };
    try {
      const retry = await meteredTranslate(ctx, subject, principal.keyId, 'translate', retryReq, model.price);
      if (retry.result) {
        tokensIn += retry.result.tokensIn;
        tokensOut += retry.result.tokensOut;
        for (const t of retry.result.translations) if (failing.has(t.id)) texts.set(t.id, t.text);
        issues = validateAll(batch, texts);
      }
    } catch (e) {
      if (!(e instanceof AppError && e.status === 402)) throw e;
    }
  }

  const translations = items.map((i) => ({ id: i.id, text: texts.get(i.id) ?? '' }));
  await maybeSample(ctx, principal, batch, translations, model.reported ?? first.result.model);
  return { translations, model: model.reported ?? first.result.model, tokensIn, tokensOut, issues };
}

/** Payload of a `judge-sample` job: the one place (besides review items) sampled text waits, until the job ends. */
export interface JudgeSamplePayload {
  orgId: string;
  sourceLocale: string;
  targetLocale: string;
  model: string;
  threshold: number;
  glossary: TranslateBatch['glossary'];
  style: TranslateBatch['style'];
  items: { id: string; source: string; target: string; isIcu: boolean }[];
}

async function maybeSample(
  ctx: AppContext,
  principal: Principal,
  batch: TranslateBatch,
  translations: { id: string; text: string }[],
  model: string,
): Promise<void> {
  if (principal.judgeSampleRate <= 0 || ctx.random() >= principal.judgeSampleRate) return;
  const payload: JudgeSamplePayload = {
    orgId: principal.orgId,
    sourceLocale: batch.sourceLocale,
    targetLocale: batch.targetLocale,
    model,
    threshold: principal.reviewThreshold,
    glossary: batch.glossary,
    style: batch.style,
    items: batch.items.map((item, i) => ({
      id: item.id,
      source: item.text,
      target: translations[i]?.text ?? '',
      isIcu: item.isIcu === true,
    })),
  };
  try {
    await enqueue(ctx.database, 'judge-sample', payload, { maxAttempts: ctx.config.jobs.maxAttempts });
  } catch (error) {
    // Sampling is best effort: the caller has been charged and gets the translation.
    ctx.log.warn({ error: error instanceof Error ? error.name : 'error' }, 'judge sample not enqueued');
  }
}
