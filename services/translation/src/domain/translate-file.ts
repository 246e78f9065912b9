// File translation: parse the locale file (400 with the line and the reason), send its strings through the one
// translate path (memory, then ONE metered call split into provider requests, validators, retry), write the
// translations back in the same format, and report the issues per key. With the organization's memory on, a file the
// memory answers in full is kept as a file answer (`memory-files.ts`) and the same request is answered from it.
import type { AppContext, Principal } from '../context.ts';
import { AppError, badRequest, payloadTooLarge } from '../errors.ts';
import { FileParseError, gettextPlurals, type ParsedFile, parseLocaleFile } from '../files/index.ts';
import {
  FILE_MAX_BYTES,
  FILE_MAX_STRINGS,
  type TranslateFileRequest,
  type TranslateFileResult,
} from '../http/schemas.ts';
import type { TranslateItem, ValidationIssue } from '../language/index.ts';
import {
  type FileAnswerKey,
  fileAnswerBodyJson,
  fileAnswerDigest,
  fileAnswerJson,
  recallFile,
  rememberFile,
  touchFile,
} from './memory-files.ts';
import type { RateLimitGate } from './metering.ts';
import { type ChunkLimits, type DryRunOutcome, passGate, resolveModel, runTranslation } from './translate.ts';

/** A file's strings go to the provider in requests of at most this many strings and source characters. */
export const FILE_CHUNKS: ChunkLimits = { maxItems: 50, maxChars: 4_000 };

function checkSize(body: Pick<TranslateFileRequest, 'content'>): void {
  if (Buffer.byteLength(body.content, 'utf8') > FILE_MAX_BYTES) {
    throw payloadTooLarge(`the file is larger than ${FILE_MAX_BYTES} bytes`);
  }
}

/** Parses the request's file: 413 over the limits, 400 (line and reason) when it does not parse. Nothing is metered. */
export function readFile(
  body: Pick<TranslateFileRequest, 'format' | 'content'>,
  log?: Pick<AppContext['log'], 'warn'>,
): ParsedFile {
  checkSize(body);
  let parsed: ParsedFile;
  try {
    parsed = parseLocaleFile(body.format, body.content);
  } catch (e) {
    if (e instanceof FileParseError)
      throw badRequest(`${body.format} file does not parse: line ${e.line}: ${e.reason}`);
    if (e instanceof AppError) throw e;
    // Never seen (the parsers are fuzzed): a parser fault on some input is still that input refused, and logged by
    // its class only (its message could quote the file).
    log?.warn({ format: body.format, error: e instanceof Error ? e.name : 'error' }, 'locale file parser fault');
    throw badRequest(`${body.format} file does not parse`);
  }
  if (parsed.strings.length > FILE_MAX_STRINGS) {
    throw payloadTooLarge(`the file has more than ${FILE_MAX_STRINGS} strings`);
  }
  return parsed;
}

/** An answer already in JSON, as text or UTF-8 (a file answer of the memory): the route sends it as it is. */
export class JsonAnswer {
  readonly json: string | Buffer;
  constructor(json: string | Buffer) {
    this.json = json;
  }
}

/**
 * Translates a locale file for an API-key caller.
 * @example const { content } = await translateFile(ctx, principal, { format: 'po', content, sourceLocale: 'en', targetLocale: 'pl', tier: 'cheap' });
 */
export async function translateFile(
  ctx: AppContext,
  principal: Principal,
  body: TranslateFileRequest,
  gate?: RateLimitGate,
): Promise<TranslateFileResult | DryRunOutcome | JsonAnswer> {
  let answerKey: Buffer | undefined;
  let model: Awaited<ReturnType<typeof resolveModel>> | undefined;
  if (principal.memoryEnabled && body.dryRun !== true) {
    // The same bytes parsed, checked and written the same way before: the limits and the parse are not redone.
    checkSize(body);
    model = await resolveModel(ctx, principal.orgId, body.tier, body.modelOverride);
    const reported = model.reported ?? model.upstream;
    answerKey = fileAnswerDigest(fileAnswerKeyOf(principal.orgId, body, model.upstream, reported));
    const hit = await recallFile(ctx.database, principal.orgId, answerKey);
    if (hit) {
      // Recorded as any call the memory answers in full: the rate limit counts it, nothing is reserved or metered.
      await passGate(ctx, gate);
      if (hit.stale) await touchFile(ctx.database, principal.orgId, answerKey);
      return new JsonAnswer(fileAnswerJson(hit, body.format, reported));
    }
  }
  const file = readFile(body, ctx.log);
  if (file.format === 'po') checkGettextLocale(body.targetLocale);
  // Provider ids: the key, or the format's short id where keys are long (PO msgids).
  const keyOf = new Map<string, string>();
  const items: TranslateItem[] = file.strings.map((s) => {
    if (s.id !== undefined) keyOf.set(s.id, s.key);
    return {
      id: s.id ?? s.key,
      text: s.text,
      isIcu: s.isIcu,
      ...(s.context ? { context: s.context.slice(0, 2_000) } : {}),
    };
  });
  const outcome = await runTranslation(
    ctx,
    principal,
    {
      sourceLocale: body.sourceLocale,
      targetLocale: body.targetLocale,
      tier: body.tier,
      ...(body.modelOverride ? { modelOverride: body.modelOverride } : {}),
      style: body.style ?? {},
      glossary: body.glossary ?? [],
      items,
    },
    { gate, chunks: FILE_CHUNKS, dryRun: body.dryRun === true, ...(model ? { model } : {}) },
  );
  if ('dryRun' in outcome) return outcome;
  // Keyed by the file's keys (the provider ids are the keys unless the format has short ids).
  let translations = outcome.texts;
  if (keyOf.size > 0) {
    translations = new Map();
    for (const [id, text] of outcome.texts) translations.set(keyOf.get(id) ?? id, text);
  }
  const written = file.write(translations, body.targetLocale);
  const byKey = (i: ValidationIssue): ValidationIssue => ({ ...i, itemId: keyOf.get(i.itemId ?? '') ?? i.itemId });
  const result: TranslateFileResult = {
    content: written.content,
    format: file.format,
    model: outcome.model,
    tokensIn: outcome.tokensIn,
    tokensOut: outcome.tokensOut,
    issues: [...outcome.issues.map(byKey), ...written.issues],
    fromMemory: outcome.fromMemory.size,
  };
  if (!outcome.memory || !answerKey) return result;
  // The memory answers every string of this file as this call did: what the next identical request gets is the
  // same file, the writer's own issues, every string from the memory. The content is encoded as JSON once, for
  // this reply and the stored answer.
  const contentJson = JSON.stringify(written.content);
  try {
    await rememberFile(
      ctx.database,
      principal.orgId,
      answerKey,
      outcome.memory.generation,
      {
        format: file.format,
        sourceLocale: body.sourceLocale,
        targetLocale: body.targetLocale,
        entryKeys: outcome.memory.keys,
      },
      fileAnswerBodyJson(contentJson, written.issues, new Set(items.map((i) => i.id)).size),
      principal.userId,
    );
  } catch (error) {
    ctx.log.warn({ error: error instanceof Error ? error.name : 'error' }, 'file answer not stored');
  }
  const { content: _, ...rest } = result;
  return new JsonAnswer(`{"content":${contentJson},${JSON.stringify(rest).slice(1)}`);
}

/** PO needs the target's gettext plural system up front (a locale whose rules have no gettext expression: 400). */
function checkGettextLocale(locale: string): void {
  try {
    gettextPlurals(locale);
  } catch {
    throw badRequest(`no gettext Plural-Forms expression matches the plural rules of ${locale}`);
  }
}

function fileAnswerKeyOf(
  orgId: string,
  body: TranslateFileRequest,
  upstreamModel: string,
  reportedModel: string,
): FileAnswerKey {
  return {
    orgId,
    format: body.format,
    content: body.content,
    sourceLocale: body.sourceLocale,
    targetLocale: body.targetLocale,
    tier: body.tier,
    modelOverride: body.modelOverride,
    upstreamModel,
    reportedModel,
    style: body.style ?? {},
    glossary: body.glossary ?? [],
  };
}
