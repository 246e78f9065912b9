import type { CallOptions, TranslationProvider } from '../providers/index.ts';
import { validateBatch } from '../validators/index.ts';
import { judgeCompletion } from './estimate.ts';
import { heuristicJudge, issueErrors } from './heuristic.ts';
import { scoresFromErrors } from './mqm.ts';
import { parseJudgeReply } from './prompt.ts';
import type { JudgeInput, JudgeResult } from './types.ts';

/**
 * Score translations 0–5 per dimension. LLM providers get the GEMBA-MQM prompt (`judge: 'llm'`, scores from the
 * annotated errors by `scoresFromErrors`); the pseudo provider gets the validator-based heuristic judge
 * (`judge: 'heuristic'`). Both report the validator issues; the LLM judge also counts them as MQM errors (ISSUE_TO_MQM)
 * for an item and dimension where the model reported none. Throws UpstreamError when the LLM call fails or its
 * reply cannot be parsed.
 *
 * @example const r = await judgeTranslations(provider, { sourceLocale: 'en', targetLocale: 'de', items, glossary: [], model }, { signal });
 */
export async function judgeTranslations(
  provider: TranslationProvider,
  input: JudgeInput,
  opts: CallOptions = {},
): Promise<JudgeResult> {
  if (provider.name === 'pseudo') return heuristicJudge(input);
  const issues = validateBatch(input.items, input);
  if (input.items.length === 0) {
    const { scores, overall } = scoresFromErrors([], 0);
    return { scores, overall, judge: 'llm', model: input.model, tokensIn: 0, tokensOut: 0, issues, errors: [] };
  }
  const reply = await provider.complete(judgeCompletion(input), opts);
  const annotated = parseJudgeReply(
    reply.text,
    input.items.map((i) => i.id),
  );
  // Validator findings are certain: count them where the model reported nothing for that item and dimension.
  const seen = new Set(annotated.map((e) => `${e.itemId}\u0000${e.category}`));
  const errors = [...annotated, ...issueErrors(issues).filter((e) => !seen.has(`${e.itemId}\u0000${e.category}`))];
  const { scores, overall } = scoresFromErrors(errors, input.items.length);
  return {
    scores,
    overall,
    judge: 'llm',
    model: reply.model,
    tokensIn: reply.tokensIn,
    tokensOut: reply.tokensOut,
    issues,
    errors,
  };
}
