// The public playground: one string (≤ 500 characters), per-IP limits, a global daily budget (402),
// the translation and a score.

import type { AppContext } from '../context.ts';
import { upstreamFailed } from '../errors.ts';
import type { PlaygroundRequest } from '../http/schemas.ts';
import type { ProviderRequest } from '../providers/index.ts';
import { meteredJudge } from './judging.ts';
import { playgroundSubject } from './metering.ts';
import { meteredTranslate, priceOf } from './translate.ts';

export interface PlaygroundResult {
  translation: string;
  score: number;
  scores: { accuracy: number; fluency: number; terminology: number; style: number; localeConventions: number };
  judge: 'llm' | 'heuristic';
  model: string;
}

export async function playground(ctx: AppContext, body: PlaygroundRequest): Promise<PlaygroundResult> {
  const model = ctx.config.models[ctx.config.playground.tier];
  const subject = playgroundSubject(ctx.config.playground.dailyBudgetMicros);
  const req: ProviderRequest = {
    sourceLocale: body.sourceLocale,
    targetLocale: body.targetLocale,
    items: [{ id: 'playground', text: body.source }],
    style: {},
    glossary: [],
    model,
  };
  const call = await meteredTranslate(ctx, subject, null, 'playground', req, priceOf(ctx, model));
  if (!call.result) throw upstreamFailed();
  const translation = call.result.translations[0]?.text ?? '';
  const judged = await meteredJudge(ctx, subject, null, 'playground', {
    sourceLocale: body.sourceLocale,
    targetLocale: body.targetLocale,
    items: [{ id: 'playground', source: body.source, target: translation }],
    glossary: [],
    model: ctx.config.models.judge,
  });
  return {
    translation,
    score: judged.overall,
    scores: judged.scores,
    judge: judged.judge,
    model: call.result.model,
  };
}
