import {
  type ProtectedToken,
  parseTag,
  scanProtected,
  type TokenKind,
  type ValidationIssue,
} from '../language/index.ts';

const PLACEHOLDER_KINDS = new Set<TokenKind>(['printf', 'mustache', 'dollar', 'brace']);

function normalize(kind: TokenKind, text: string): string {
  // `{{ x }}` and `{{x}}` are the same placeholder.
  if (kind === 'mustache' || kind === 'dollar' || kind === 'brace') return text.replace(/\s+/g, '');
  return text;
}

/** Counts of each item; with `presence` every count is 1 (ICU: plural/select cases repeat tokens legitimately). */
function multiset(items: string[], presence: boolean): Map<string, number> {
  const m = new Map<string, number>();
  for (const i of items) m.set(i, presence ? 1 : (m.get(i) ?? 0) + 1);
  return m;
}

function diff(
  source: Map<string, number>,
  target: Map<string, number>,
): { missing: [string, number][]; extra: [string, number][] } {
  const missing: [string, number][] = [];
  const extra: [string, number][] = [];
  for (const [k, n] of source) {
    const t = target.get(k) ?? 0;
    if (t < n) missing.push([k, n - t]);
  }
  for (const [k, n] of target) {
    const s = source.get(k) ?? 0;
    if (n > s) extra.push([k, n - s]);
  }
  return { missing, extra };
}

function times(n: number): string {
  return n > 1 ? ` (${n} times)` : '';
}

/**
 * Placeholders and tags:
 * - `placeholder_missing` / `placeholder_extra`: the multiset of placeholders (`%s`, `%1$d`, `{{x}}`, `${x}`, and `{name}`
 *   when not ICU) differs between source and target; order may change, the count of each may not (in ICU strings
 *   only presence is compared: a target locale with more plural cases repeats tokens legitimately);
 * - `tag_missing` / `tag_extra`: the multiset of tags (by name and kind; attributes may be translated) differs;
 * - `tag_unbalanced`: the target's tags do not nest (`<b><i></b></i>`, unclosed `<b>`, stray `</b>`).
 */
export function validatePlaceholders(
  source: string,
  target: string,
  opts: { icu: boolean },
  /** `scanProtected` of source and target with the same `icu`, when the caller has them. */
  scanned?: { source: ProtectedToken[]; target: ProtectedToken[] },
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const src = scanned?.source ?? scanProtected(source, opts);
  const tgt = scanned?.target ?? scanProtected(target, opts);

  const ph = (ts: typeof src) =>
    ts.filter((t) => PLACEHOLDER_KINDS.has(t.kind) && t.text !== '%%').map((t) => normalize(t.kind, t.text));
  const p = diff(multiset(ph(src), opts.icu), multiset(ph(tgt), opts.icu));
  for (const [k, n] of p.missing)
    issues.push({ code: 'placeholder_missing', message: `placeholder ${k} missing${times(n)}` });
  for (const [k, n] of p.extra)
    issues.push({ code: 'placeholder_extra', message: `placeholder ${k} not in source${times(n)}` });

  const tagKey = (text: string) => {
    const t = parseTag(text);
    return t.kind === 'close' ? `</${t.name}>` : t.kind === 'self' ? `<${t.name}/>` : `<${t.name}>`;
  };
  const tags = (ts: typeof src) => ts.filter((t) => t.kind === 'tag').map((t) => tagKey(t.text));
  const t = diff(multiset(tags(src), opts.icu), multiset(tags(tgt), opts.icu));
  for (const [k, n] of t.missing) issues.push({ code: 'tag_missing', message: `tag ${k} missing${times(n)}` });
  for (const [k, n] of t.extra) issues.push({ code: 'tag_extra', message: `tag ${k} not in source${times(n)}` });

  const unbalanced = balanceProblem(tgt);
  // A source that is itself a fragment (unclosed tag) cannot require a balanced target.
  if (unbalanced !== undefined && balanceProblem(src) === undefined) {
    issues.push({ code: 'tag_unbalanced', message: `tags do not nest: ${unbalanced}` });
  }
  return issues;
}

function balanceProblem(tokens: ReturnType<typeof scanProtected>): string | undefined {
  const stack: string[] = [];
  for (const tok of tokens) {
    if (tok.kind !== 'tag') continue;
    const tag = parseTag(tok.text);
    if (tag.kind === 'open') stack.push(tag.name);
    else if (tag.kind === 'close') {
      if (stack.at(-1) !== tag.name) {
        return `</${tag.name}> does not close ${stack.length ? `<${stack.at(-1)}>` : 'any open tag'}`;
      }
      stack.pop();
    }
  }
  return stack.length > 0 ? `<${stack.at(-1)}> is not closed` : undefined;
}
