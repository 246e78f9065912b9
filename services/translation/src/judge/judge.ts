import type { CallOptions, TranslationProvider } from '../providers/types.ts';
import type { JudgeInput, JudgeResult } from './types.ts';

/**
 * Score translations 0–5 per dimension. LLM providers get a GEMBA-MQM prompt (`judge: 'llm'`);
 * the pseudo provider gets the validator-based heuristic judge (`judge: 'heuristic'`).
 * Throws UpstreamError when the LLM call fails or its reply cannot be parsed.
 */
export async function judgeTranslations(
  _provider: TranslationProvider,
  _input: JudgeInput,
  _opts: CallOptions = {},
): Promise<JudgeResult> {
  throw new Error('judgeTranslations: not implemented yet');
}
