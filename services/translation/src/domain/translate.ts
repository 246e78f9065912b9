// Translate orchestration (both translate routes): resolve the model, answer what the organization's translation
// memory holds, reserve quota and budget, call the provider, validate, retry once with the issues as feedback, settle
// with the reported usage, remember what passed, maybe sample for background judging.

import type { AppContext, Principal } from '../context.ts';
import type { FineTunedModel } from '../db/schema.ts';
import { AppError, forbidden, rateLimited, upstreamFailed } from '../errors.ts';
import type { TranslateBatch, TranslateResult } from '../http/schemas.ts';
import { enqueue } from '../infra/jobs.ts';
import { checkRateLimit } from '../infra/rate-limiter.ts';
import type { TranslateItem, ValidationIssue } from '../language/index.ts';
import type { ProviderRequest, ProviderResult } from '../providers/index.ts';
import { UpstreamError } from '../providers/index.ts';
import { isRetryable, validateBatch } from '../validators/index.ts';
import { memoryKey, type Remembered, recall, remember } from './memory.ts';
import {
  costMicros,
  type MeteredCall,
  type MeterSubject,
  orgSubject,
  type Price,
  type RateLimitGate,
} from './metering.ts';

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

/** A metered translation: one or more provider requests under ONE reservation (their estimates summed). */
export async function meteredTranslateChunks(
  ctx: AppContext,
  subject: MeterSubject,
  apiKeyId: string | null,
  kind: 'translate' | 'playground',
  reqs: ProviderRequest[],
  price: Price,
  gate?: RateLimitGate,
): Promise<MeteredCall<ProviderResult>> {
  const estimate = sumEstimates(ctx, reqs);
  const call = await ctx.meter.meteredCall(subject, {
    estimate,
    price,
    run: () => runChunks(ctx, reqs, kind),
    usage: { apiKeyId, kind, model: reqs[0]!.model, items: reqs.reduce((n, r) => n + r.items.length, 0) },
    ...(gate ? { gate } : {}),
  });
  if (call.error !== undefined && !(call.error instanceof UpstreamError)) throw call.error;
  return call;
}

/**
 * One metered provider call: reserve (throws 402), translate, settle with the reported usage (or release on failure).
 * Never throws for an upstream failure: returns it, so callers decide (502, or keep an earlier result).
 */
export function meteredTranslate(
  ctx: AppContext,
  subject: MeterSubject,
  apiKeyId: string | null,
  kind: 'translate' | 'playground',
  req: ProviderRequest,
  price: Price,
  gate?: RateLimitGate,
): Promise<MeteredCall<ProviderResult>> {
  return meteredTranslateChunks(ctx, subject, apiKeyId, kind, [req], price, gate);
}

function sumEstimates(ctx: AppContext, reqs: ProviderRequest[]): { tokensIn: number; maxTokensOut: number } {
  let tokensIn = 0;
  let maxTokensOut = 0;
  for (const r of reqs) {
    const e = ctx.provider.estimateTranslate(r);
    tokensIn += e.tokensIn;
    maxTokensOut += e.maxTokensOut;
  }
  return { tokensIn, maxTokensOut };
}

/** Provider requests of one metered call at the same time (a file's batches). */
const CHUNK_CONCURRENCY = 4;

/** Runs the requests (at most CHUNK_CONCURRENCY at once); the results summed. Any failure fails the whole call. */
async function runChunks(ctx: AppContext, reqs: ProviderRequest[], kind: string): Promise<ProviderResult> {
  const results: ProviderResult[] = new Array(reqs.length);
  let next = 0;
  const worker = async () => {
    while (next < reqs.length) {
      const i = next++;
      ctx.metrics.providerRequests.inc({ kind });
      results[i] = await ctx.provider.translate(reqs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CHUNK_CONCURRENCY, reqs.length) }, worker));
  return {
    translations: results.flatMap((r) => r.translations),
    model: results[0]!.model,
    tokensIn: results.reduce((n, r) => n + r.tokensIn, 0),
    tokensOut: results.reduce((n, r) => n + r.tokensOut, 0),
  };
}

/** How a job's items are split into provider requests (a file's thousands of strings; /translate sends one). */
export interface ChunkLimits {
  maxItems: number;
  /** Source characters per request (keeps each reply well under the output-token cap). */
  maxChars: number;
}

export function chunkItems<T extends { text: string }>(items: T[], limits?: ChunkLimits): T[][] {
  if (!limits) return items.length ? [items] : [];
  const out: T[][] = [];
  let cur: T[] = [];
  let chars = 0;
  for (const item of items) {
    if (cur.length > 0 && (cur.length >= limits.maxItems || chars + item.text.length > limits.maxChars)) {
      out.push(cur);
      cur = [];
      chars = 0;
    }
    cur.push(item);
    chars += item.text.length;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** What the translate routes ask for: the batch's fields, the items in any number. */
export type TranslationJob = Omit<TranslateBatch, 'items'> & { items: TranslateItem[] };

export interface TranslationOutcome {
  texts: Map<string, string>;
  /** Ids answered from the organization's translation memory (no provider call, no tokens). */
  fromMemory: Set<string>;
  model: string;
  tokensIn: number;
  tokensOut: number;
  issues: ValidationIssue[];
  /**
   * Set when the organization's memory, at `generation`, answers every item exactly as this outcome does (each
   * text is the memory's, nothing was refused or flagged): what a file answer of the memory may be made from.
   * `keys` are the items' distinct memory keys.
   */
  memory?: { generation: number; keys: string[] };
}

export interface DryRunOutcome {
  dryRun: true;
  model: string;
  /** Items the provider would translate. */
  items: number;
  /** Items the translation memory would answer. */
  fromMemory: number;
  /** Provider requests the call would make (before a validator retry). */
  providerRequests: number;
  /** What the call would reserve: the provider's token estimate, and its price. */
  estimate: { tokensIn: number; maxTokensOut: number };
  priceMicros: number;
}

function validateAll(job: TranslationJob, texts: Map<string, string>, items = job.items): ValidationIssue[] {
  return validateBatch(
    items.map((item) => ({
      id: item.id,
      source: item.text,
      target: texts.get(item.id) ?? '',
      isIcu: item.isIcu === true,
    })),
    { sourceLocale: job.sourceLocale, targetLocale: job.targetLocale, glossary: job.glossary },
  );
}

/** Counts the request against a gate when no reservation carries it (a dry run, a call answered from memory). */
export async function passGate(ctx: AppContext, gate: RateLimitGate | undefined): Promise<void> {
  if (!gate) return;
  const decision = await checkRateLimit(ctx.rateLimits.store, gate.bucket, gate.limit, gate.windowMs, ctx.now());
  gate.onDecision(decision);
  if (!decision.allowed) {
    ctx.metrics.rateLimited.inc({ route: gate.route ?? 'translate' });
    throw rateLimited(decision.retryAfterSeconds);
  }
}

/** What the memory answered: id → text for the items it answers, and how it was read. */
interface MemoryAnswers {
  texts: Map<string, string>;
  /** Each item's memory key (by index in the job's items). */
  keys: string[];
  generation: number;
  /** Stored translations the validators refused with this job's glossary (translated again). */
  refused: number;
}

/** The memory's answers for `items` that pass the validators with this job's glossary (id → text). */
async function fromMemory(
  ctx: AppContext,
  principal: Principal,
  job: TranslationJob,
): Promise<MemoryAnswers | undefined> {
  if (!principal.memoryEnabled) return undefined;
  const { hits, keys, generation } = await recall(
    ctx.database,
    principal.orgId,
    job.sourceLocale,
    job.targetLocale,
    job.items,
  );
  const texts = new Map<string, string>();
  const recheck: TranslateItem[] = [];
  for (const [i, hit] of hits) {
    const item = job.items[i]!;
    texts.set(item.id, hit.text);
    // A provider's translation passed every validator when it was stored; only this request's glossary is new to
    // it. Reviewed (approved) and imported entries are checked like a fresh translation.
    if (hit.origin !== 'translation' || job.glossary.length > 0) recheck.push(item);
  }
  // A stored translation the validators now refuse is translated again.
  const before = texts.size;
  for (const issue of validateAll(job, texts, recheck)) texts.delete(issue.itemId!);
  return { texts, keys, generation, refused: before - texts.size };
}

/**
 * The one translate path of the API: the translation memory first (when on), then the provider through ONE metered
 * call for the rest (split into requests by `chunks`), the validators, one retry of the failing items with their
 * issues as feedback, the memory updated with what passed, and maybe a sample for background judging.
 * `dryRun` stops before the provider: what the call would reserve.
 */
export async function runTranslation(
  ctx: AppContext,
  principal: Principal,
  job: TranslationJob,
  opts: {
    gate?: RateLimitGate | undefined;
    chunks?: ChunkLimits;
    dryRun?: boolean;
    /** The job's model, when the caller resolved it already. */
    model?: ResolvedModel;
  } = {},
): Promise<TranslationOutcome | DryRunOutcome> {
  const model = opts.model ?? (await resolveModel(ctx, principal.orgId, job.tier, job.modelOverride));
  const subject = orgSubject(principal);
  const memory = await fromMemory(ctx, principal, job);
  const texts = memory?.texts ?? new Map<string, string>();
  const remembered = new Set(texts.keys());
  const pending = job.items.filter((i) => !remembered.has(i.id));
  const request = (items: TranslateItem[], feedback?: ValidationIssue[]): ProviderRequest => ({
    sourceLocale: job.sourceLocale,
    targetLocale: job.targetLocale,
    items,
    style: job.style,
    glossary: job.glossary,
    model: model.upstream,
    ...(feedback ? { feedback } : {}),
  });
  const reqs = chunkItems(pending, opts.chunks).map((items) => request(items));
  const reported = model.reported ?? model.upstream;
  if (opts.dryRun) {
    await passGate(ctx, opts.gate);
    const estimate = reqs.length ? sumEstimates(ctx, reqs) : { tokensIn: 0, maxTokensOut: 0 };
    return {
      dryRun: true,
      model: reported,
      items: pending.length,
      fromMemory: remembered.size,
      providerRequests: reqs.length,
      estimate,
      priceMicros: reqs.length ? costMicros(estimate.tokensIn, estimate.maxTokensOut, model.price) : 0,
    };
  }
  if (reqs.length === 0) {
    await passGate(ctx, opts.gate);
    return {
      texts,
      fromMemory: remembered,
      model: reported,
      tokensIn: 0,
      tokensOut: 0,
      issues: [],
      ...(memory ? { memory: { generation: memory.generation, keys: [...new Set(memory.keys)] } } : {}),
    };
  }
  // The rate-limit hit rides with the first reservation (one round trip); the retry is not a new request.
  const first = await meteredTranslateChunks(ctx, subject, principal.keyId, 'translate', reqs, model.price, opts.gate);
  if (!first.result) throw upstreamFailed();
  let tokensIn = first.result.tokensIn;
  let tokensOut = first.result.tokensOut;
  const pendingIds = new Set(pending.map((i) => i.id));
  for (const t of first.result.translations) if (pendingIds.has(t.id)) texts.set(t.id, t.text);
  let issues = validateAll(job, texts, pending);

  const retryable = issues.filter(isRetryable);
  if (retryable.length > 0) {
    // One retry of the failing items, with their issues as feedback. Issues of the client's own source (invalid
    // ICU, unknown locale) are not retried: asking again cannot fix them. A 402 or upstream failure here keeps the
    // first answer, with its issues flagged.
    const failing = new Set(retryable.map((i) => i.itemId));
    const retryReqs = chunkItems(
      pending.filter((i) => failing.has(i.id)),
      opts.chunks,
    ).map((items) => {
      const ids = new Set(items.map((i) => i.id));
      return request(
        items,
        retryable.filter((i) => ids.has(i.itemId!)),
      );
    });
    try {
      const retry = await meteredTranslateChunks(ctx, subject, principal.keyId, 'translate', retryReqs, model.price);
      if (retry.result) {
        tokensIn += retry.result.tokensIn;
        tokensOut += retry.result.tokensOut;
        for (const t of retry.result.translations) if (failing.has(t.id)) texts.set(t.id, t.text);
        issues = validateAll(job, texts, pending);
      }
    } catch (e) {
      if (!(e instanceof AppError && e.status === 402)) throw e;
    }
  }
  const modelName = model.reported ?? first.result.model;
  let answersAll: TranslationOutcome['memory'];
  if (memory) {
    const keyOf = new Map(job.items.map((item, i) => [item, memory.keys[i]!]));
    const stored = await rememberClean(ctx, principal, job, pending, texts, issues, keyOf);
    answersAll = memoryAnswersAll(memory, job.items, pending, texts, issues, stored, keyOf);
  }
  await maybeSample(ctx, principal, job, pending, texts, modelName);
  return {
    texts,
    fromMemory: remembered,
    model: modelName,
    tokensIn,
    tokensOut,
    issues,
    ...(answersAll ? { memory: answersAll } : {}),
  };
}

/**
 * Whether the memory, after this call's store, answers every item exactly as the call did: the memory's own answers
 * passed (none refused), every provider translation passed and was stored (one text per key), and no other change
 * came between the lookup and the store (the store moved the generation by exactly one).
 */
function memoryAnswersAll(
  memory: MemoryAnswers,
  items: TranslateItem[],
  pending: TranslateItem[],
  texts: Map<string, string>,
  issues: ValidationIssue[],
  stored: Remembered | undefined,
  keyOf: Map<TranslateItem, string>,
): TranslationOutcome['memory'] {
  if (memory.refused > 0 || issues.length > 0 || stored?.generation == null) return undefined;
  if (stored.generation !== memory.generation + 1) return undefined;
  const targetOf = new Map<string, string>();
  for (const item of pending) {
    const key = keyOf.get(item)!;
    const text = texts.get(item.id);
    if (text === undefined || (targetOf.has(key) && targetOf.get(key) !== text)) return undefined;
    targetOf.set(key, text);
  }
  if (stored.written !== targetOf.size) return undefined;
  return { generation: stored.generation, keys: [...new Set(items.map((i) => keyOf.get(i)!))] };
}

/** Stores the translations that passed the validators (best effort: the caller has been charged already). */
async function rememberClean(
  ctx: AppContext,
  principal: Principal,
  job: TranslationJob,
  items: TranslateItem[],
  texts: Map<string, string>,
  issues: ValidationIssue[],
  keyOf: Map<TranslateItem, string>,
): Promise<Remembered | undefined> {
  const flagged = new Set(issues.map((i) => i.itemId));
  const entries = items
    .filter((i) => !flagged.has(i.id) && texts.has(i.id))
    .map((i) => ({
      text: i.text,
      isIcu: i.isIcu === true,
      context: i.context,
      key: keyOf.get(i) ?? memoryKey(i),
      target: texts.get(i.id)!,
    }));
  try {
    return await remember(ctx.database, principal.orgId, job, entries, 'translation', principal.userId);
  } catch (error) {
    ctx.log.warn({ error: error instanceof Error ? error.name : 'error' }, 'translation memory not updated');
    return undefined;
  }
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
): Promise<TranslateResult | DryRunOutcome> {
  const outcome = await runTranslation(ctx, principal, batch, { gate, dryRun: batch.dryRun === true });
  if ('dryRun' in outcome) return outcome;
  const translations = batch.items.map((i) => ({
    id: i.id,
    text: outcome.texts.get(i.id) ?? '',
    ...(outcome.fromMemory.has(i.id) ? { fromMemory: true as const } : {}),
  }));
  return {
    translations,
    model: outcome.model,
    tokensIn: outcome.tokensIn,
    tokensOut: outcome.tokensOut,
    issues: outcome.issues,
  };
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

/** Items of one judge sample at most (a file's thousands of strings are sampled, not all judged). */
const SAMPLE_MAX_ITEMS = 50;

async function maybeSample(
  ctx: AppContext,
  principal: Principal,
  job: TranslationJob,
  items: TranslateItem[],
  texts: Map<string, string>,
  model: string,
): Promise<void> {
  if (principal.judgeSampleRate <= 0 || ctx.random() >= principal.judgeSampleRate) return;
  const payload: JudgeSamplePayload = {
    orgId: principal.orgId,
    sourceLocale: job.sourceLocale,
    targetLocale: job.targetLocale,
    model,
    threshold: principal.reviewThreshold,
    glossary: job.glossary,
    style: job.style,
    items: items.slice(0, SAMPLE_MAX_ITEMS).map((item) => ({
      id: item.id,
      source: item.text,
      target: texts.get(item.id) ?? '',
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
