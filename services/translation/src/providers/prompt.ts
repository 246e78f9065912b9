import { pluralCategories } from '../language/index.ts';
import type { ProviderRequest } from './types.ts';
import { UpstreamError } from './upstream-error.ts';

export interface BuiltPrompt {
  system: string;
  user: string;
}

/** Marker the fakes (and any reader) use to tell a translate prompt from a judge prompt. */
export const TRANSLATE_TASK = 'translate';

/** `o` without its undefined and empty-string fields (key order kept). */
function clean<T extends object>(o: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const v = o[k];
    if (v !== undefined && v !== '') out[k] = v;
  }
  return out as Partial<T>;
}

/**
 * The user message in pieces: `user === head + items.join(',') + tail` (the items array is the document's last
 * field). Lets the token estimate count each item on its own (and remember it) instead of the whole document.
 */
export interface PromptParts {
  head: string;
  items: string[];
  tail: string;
}

// The reservation estimate and the provider call build the prompt of the same request object: build it once.
const built = new WeakMap<ProviderRequest, { key: readonly unknown[]; prompt: BuiltPrompt; parts: PromptParts }>();
const promptKey = (req: ProviderRequest): unknown[] => [
  req.sourceLocale,
  req.targetLocale,
  req.items,
  req.items.length,
  req.style,
  req.glossary,
  req.feedback,
];

function memoized(req: ProviderRequest): { prompt: BuiltPrompt; parts: PromptParts } {
  const key = promptKey(req);
  const known = built.get(req);
  if (known?.key.every((v, i) => v === key[i])) return known;
  const entry = { key, ...buildPrompt(req) };
  built.set(req, entry);
  return entry;
}

/**
 * The prompt for a translate call (memoized per request object: the same object with the same fields gives the
 * same prompt without rebuilding it; item objects are not expected to change once handed to a provider). The system message carries the rules; the user message is ONE JSON document
 * (task, locales, plural categories, style, glossary, retry feedback, items with context, neighbors, examples).
 * The model must answer `{"translations": {"<id>": "<text>", …}}`.
 */
export function buildTranslationPrompt(req: ProviderRequest): BuiltPrompt {
  return memoized(req).prompt;
}

/** The user message of `buildTranslationPrompt(req)` in pieces (see PromptParts). */
export function translationPromptParts(req: ProviderRequest): PromptParts {
  return memoized(req).parts;
}

function buildPrompt(req: ProviderRequest): { prompt: BuiltPrompt; parts: PromptParts } {
  const cardinal = pluralCategories(req.targetLocale, 'cardinal') ?? ['other'];
  const ordinal = pluralCategories(req.targetLocale, 'ordinal') ?? ['other'];
  const hasIcu = req.items.some((i) => i.isIcu);
  const rules = [
    `You are a professional software localization translator. Translate the "text" of every item from ${req.sourceLocale} to ${req.targetLocale}.`,
    'Reply with ONE JSON object and nothing else, no code fence: {"translations": {"<item id>": "<translated text>"}}, with exactly one entry for every item id.',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text ${x} is meant
    'Keep placeholders exactly as written ({name}, {0}, %s, %1$d, {{x}}, ${x}), keep HTML/XML tags, entities and URLs; translate only human-readable text.',
    'Glossary: where the source contains a term, use its "target"; copy terms marked "neverTranslate" verbatim.',
    'Use "context", "neighbors" and "examples" only to understand the meaning; do not translate or return them.',
    'Follow the style (tone, audience, notes) when given. Never add explanations.',
  ];
  if (hasIcu) {
    rules.push(
      `Items with "isIcu": true are ICU MessageFormat: keep every argument name and type and the plural/select/selectordinal syntax; translate only the text inside the cases; keep select keys. In ${req.targetLocale} a plural needs exactly the categories ${cardinal.join(', ')} and a selectordinal ${ordinal.join(', ')} (plus any =N cases).`,
    );
  }
  if (req.feedback && req.feedback.length > 0) {
    rules.push('A previous attempt had the problems listed in "feedback"; fix them.');
  }
  const task = clean({
    task: TRANSLATE_TASK,
    sourceLocale: req.sourceLocale,
    targetLocale: req.targetLocale,
    pluralCategories: hasIcu ? { cardinal, ordinal } : undefined,
    style: Object.keys(clean(req.style)).length > 0 ? clean(req.style) : undefined,
    glossary: req.glossary.length > 0 ? req.glossary : undefined,
    feedback:
      req.feedback && req.feedback.length > 0
        ? req.feedback.map((f) => clean({ id: f.itemId, code: f.code, message: f.message }))
        : undefined,
    items: [],
  });
  const items = req.items.map((i) =>
    JSON.stringify(
      clean({
        id: i.id,
        text: i.text,
        isIcu: i.isIcu ? true : undefined,
        context: i.context,
        neighbors: i.neighbors && i.neighbors.length > 0 ? i.neighbors : undefined,
        examples: i.examples && i.examples.length > 0 ? i.examples : undefined,
      }),
    ),
  );
  // `items` is the last field: the document is everything before its `[]`, the items, then `]}`.
  const empty = JSON.stringify(task);
  const parts = { head: empty.slice(0, -2), items, tail: empty.slice(-2) };
  return { prompt: { system: rules.join('\n'), user: parts.head + items.join(',') + parts.tail }, parts };
}

/** The reply the prompt asks for, as the pseudo provider and the fakes write it. */
export function formatTranslationReply(translations: { id: string; text: string }[]): string {
  return JSON.stringify({ translations: Object.fromEntries(translations.map((t) => [t.id, t.text])) });
}

/**
 * Find the JSON object in a model reply: the whole text, or inside a ```json fence, or from the first `{` to the
 * last `}`. Throws UpstreamError('malformed') when none parses to an object.
 */
export function extractJsonObject(text: string): Record<string, unknown> {
  const candidates = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) candidates.push(fence[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push(text.slice(first, last + 1));
  for (const c of candidates) {
    try {
      const v: unknown = JSON.parse(c);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // try the next candidate
    }
  }
  throw new UpstreamError('malformed', 'upstream reply is not a JSON object');
}

/**
 * Parse a translate reply defensively. Accepts `{"translations": {id: text}}` (asked for) and also
 * `{"translations": [{"id", "text"}]}` or a bare `{id: text}` map. Returns one translation per requested id,
 * in request order; throws UpstreamError('malformed') for an unusable reply and ('missing_items') when an id
 * has no string translation.
 */
export function parseTranslationReply(text: string, ids: string[]): { id: string; text: string }[] {
  const obj = extractJsonObject(text);
  const raw = 'translations' in obj ? obj.translations : obj;
  const byId = new Map<string, unknown>();
  if (Array.isArray(raw)) {
    for (const entry of raw) {
      if (entry && typeof entry === 'object' && 'id' in entry && 'text' in entry) {
        byId.set(String((entry as { id: unknown }).id), (entry as { text: unknown }).text);
      }
    }
  } else if (raw !== null && typeof raw === 'object') {
    for (const [k, v] of Object.entries(raw)) byId.set(k, v);
  } else {
    throw new UpstreamError('malformed', 'upstream reply has no translations object');
  }
  const missing = ids.filter((id) => typeof byId.get(id) !== 'string');
  if (missing.length > 0) {
    throw new UpstreamError('missing_items', `upstream reply lacks ${missing.length} of ${ids.length} item(s)`);
  }
  return ids.map((id) => ({ id, text: byId.get(id) as string }));
}
