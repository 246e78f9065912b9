import { countPromptTokens, countTokens } from '../tokens/index.ts';
import { buildTranslationPrompt, formatTranslationReply } from './prompt.ts';
import { pseudoLocalize } from './pseudo-transform.ts';
import type {
  CallOptions,
  CompletionPrompt,
  CompletionResult,
  ProviderRequest,
  ProviderResult,
  TranslationProvider,
} from './types.ts';
import { UpstreamError } from './upstream-error.ts';

/**
 * The pseudo provider's whole answer, pure: pseudo-localized items, and honest token counts — the prompt an LLM
 * would have been sent (`buildTranslationPrompt`) and the JSON reply it would have written, both counted with
 * the real tokenizer.
 */
export function pseudoTranslate(req: ProviderRequest): ProviderResult {
  // The orchestrator estimates (reserve) then translates the same request: do the work once. The WeakMap lives
  // only as long as the request object; the fingerprint catches a request changed in between.
  const fingerprint = JSON.stringify(req);
  const known = lastResults.get(req);
  if (known && known.fingerprint === fingerprint) return structuredClone(known.result);
  const result = computePseudo(req);
  lastResults.set(req, { fingerprint, result: structuredClone(result) });
  return result;
}

const lastResults = new WeakMap<ProviderRequest, { fingerprint: string; result: ProviderResult }>();

function computePseudo(req: ProviderRequest): ProviderResult {
  const translations = req.items.map((item) => ({
    id: item.id,
    text: pseudoLocalize(item.text, {
      isIcu: item.isIcu === true,
      targetLocale: req.targetLocale,
      glossary: req.glossary,
    }),
  }));
  return {
    translations,
    model: req.model,
    tokensIn: countPromptTokens(buildTranslationPrompt(req)),
    tokensOut: countTokens(formatTranslationReply(translations)),
  };
}

function checkSignal(opts: CallOptions): void {
  if (opts.signal?.aborted) throw new UpstreamError('aborted', 'request aborted before the provider ran');
}

/** Deterministic pseudo-localization provider: the embedded default, needs no account and no network. */
export function createPseudoProvider(): TranslationProvider {
  return {
    name: 'pseudo',
    // Exact: the estimate is the answer itself (computed once per request object, see pseudoTranslate).
    estimateTranslate(req: ProviderRequest) {
      const r = pseudoTranslate(req);
      return { tokensIn: r.tokensIn, maxTokensOut: r.tokensOut };
    },
    estimateComplete(prompt: CompletionPrompt) {
      return { tokensIn: countPromptTokens(prompt), maxTokensOut: countTokens(pseudoLocalize(prompt.user)) };
    },
    async translate(req: ProviderRequest, opts: CallOptions = {}): Promise<ProviderResult> {
      checkSignal(opts);
      return pseudoTranslate(req);
    },
    async complete(prompt: CompletionPrompt, opts: CallOptions = {}): Promise<CompletionResult> {
      checkSignal(opts);
      const text = pseudoLocalize(prompt.user);
      return { text, model: prompt.model, tokensIn: countPromptTokens(prompt), tokensOut: countTokens(text) };
    },
  };
}
