import { extractJsonObject, UpstreamError } from '../providers/index.ts';
import type { JudgeInput, MqmCategory, MqmError, MqmSeverity } from './types.ts';

/** Marker the fakes use to tell a judge prompt from a translate prompt. */
export const JUDGE_TASK = 'judge';

/**
 * GEMBA-MQM-style prompt: the model annotates errors (category, severity) per item instead of giving a score;
 * the score is computed from the errors (`scoresFromErrors`). The user message is one JSON document.
 */
export function buildJudgePrompt(input: JudgeInput): { system: string; user: string } {
  const system = [
    `You are an expert translation quality annotator using the MQM framework. For each item, identify the errors in the translation ("target") of the source from ${input.sourceLocale} to ${input.targetLocale}.`,
    'Categories: "accuracy" (mistranslation, omission, addition, untranslated text, broken placeholders or ICU arguments), "fluency" (grammar, spelling, punctuation, register, broken markup), "terminology" (glossary terms not used or translated inconsistently), "style" (does not follow the requested tone, audience or notes; awkward), "localeConventions" (dates, numbers, currency, plural forms, quotation marks of the target locale).',
    'Severities: "critical" (meaning lost or the string is unusable), "major" (meaning changed or hard to understand), "minor" (imperfect but understandable).',
    'Report at most 3 errors per item, each with a description of at most 15 words. An item without errors gets none.',
    'Reply with ONE JSON object and nothing else: {"errors": [{"id": "<item id>", "category": "<category>", "severity": "<severity>", "description": "<text>"}]}. Use {"errors": []} when the translations are perfect.',
  ].join('\n');
  const user = JSON.stringify({
    task: JUDGE_TASK,
    sourceLocale: input.sourceLocale,
    targetLocale: input.targetLocale,
    ...(input.style && Object.values(input.style).some((v) => v) ? { style: input.style } : {}),
    ...(input.glossary.length > 0 ? { glossary: input.glossary } : {}),
    items: input.items.map((i) => ({
      id: i.id,
      source: i.source,
      target: i.target,
      ...(i.isIcu ? { isIcu: true } : {}),
      ...(i.context ? { context: i.context } : {}),
    })),
  });
  return { system, user };
}

const CATEGORY_ALIASES: Record<string, MqmCategory> = {
  accuracy: 'accuracy',
  fluency: 'fluency',
  terminology: 'terminology',
  style: 'style',
  localeconventions: 'localeConventions',
  locale_conventions: 'localeConventions',
  'locale conventions': 'localeConventions',
  locale: 'localeConventions',
};

const SEVERITIES = new Set<MqmSeverity>(['minor', 'major', 'critical']);

/**
 * Parse a judge reply defensively: `{"errors": [...]}` (also accepted: `{"items": [{"id", "errors": [...]}]}`).
 * Entries with an unknown category or severity are skipped, categories like "Accuracy/Mistranslation" are
 * reduced to their top level, "neutral"/"no-error" entries are ignored, descriptions are cut at 200 characters.
 * A reply that is not a JSON object with an errors list throws UpstreamError('malformed').
 */
export function parseJudgeReply(text: string, itemIds: string[]): MqmError[] {
  const obj = extractJsonObject(text);
  let raw: unknown[] | undefined;
  if (Array.isArray(obj.errors)) raw = obj.errors;
  else if (Array.isArray(obj.items)) {
    raw = obj.items.flatMap((it: unknown) => {
      const item = it as { id?: unknown; errors?: unknown };
      return Array.isArray(item.errors) ? item.errors.map((e: unknown) => ({ id: item.id, ...(e as object) })) : [];
    });
  }
  if (raw === undefined) throw new UpstreamError('malformed', 'judge reply has no errors list');
  const known = new Set(itemIds);
  const out: MqmError[] = [];
  for (const entry of raw.slice(0, 1000)) {
    if (entry === null || typeof entry !== 'object') continue;
    const e = entry as Record<string, unknown>;
    const cat = typeof e.category === 'string' ? e.category.toLowerCase().split(/[/:-]/)[0]!.trim() : '';
    const category = CATEGORY_ALIASES[cat];
    const severity = typeof e.severity === 'string' ? (e.severity.toLowerCase().trim() as MqmSeverity) : undefined;
    if (category === undefined || severity === undefined || !SEVERITIES.has(severity)) continue;
    const id = typeof e.id === 'string' || typeof e.id === 'number' ? String(e.id) : undefined;
    out.push({
      ...(id !== undefined && known.has(id) ? { itemId: id } : {}),
      category,
      severity,
      description: typeof e.description === 'string' ? e.description.slice(0, 200) : '',
    });
  }
  return out;
}
