/**
 * Every pattern is linear-time (bounded repetitions, no nested ambiguity): texts come from the network.
 *
 * Protected tokens: the spans of a string that a translation must carry over unchanged.
 * One source for the placeholder validator and the pseudo-localizer.
 */

/** HTML/XML tags: `<b>`, `</b>`, `<a href="x">`, `<br/>`. A `<` not followed by a letter or `/` is text ("a < b"). */
const TAG = String.raw`<\/?[A-Za-z][\w:.-]{0,63}(?:\s[^<>]*)?\/?>`;
/**
 * printf family: `%s`, `%d`, `%1$d`, `%.2f`, `%@`, Python's named `%(count)d`, `%%` (the last is a literal percent,
 * matched so it is skipped).
 */
const PRINTF = String.raw`%%|%(?:\([A-Za-z_]\w{0,63}\)|\d{1,2}\$)?[-+0#]{0,4}(?:\d{1,3}|\*)?(?:\.(?:\d{1,3}|\*))?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGaAcspn@]`;
/** Mustache/Handlebars/Angular/i18next: `{{x}}`, `{{{x}}}`, `{{ user.name }}`. */
const MUSTACHE = String.raw`\{\{\{?[^{}]*\}?\}\}`;
/** Template literal style `${x}`. */
const DOLLAR_BRACE = String.raw`\$\{[^{}]*\}`;
/** Simple braces `{name}`, `{0}`, `{}` (non-ICU strings only: in ICU strings arguments are checked by the ICU validator). */
const BRACE = String.raw`\{[^{}]*\}`;
/** HTML entities `&amp;`, `&#169;`, `&#xA9;`. */
const ENTITY = String.raw`&(?:[A-Za-z][A-Za-z0-9]{0,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});`;
/** URLs and e-mail addresses are never translated. */
const URL = String.raw`\bhttps?:\/\/[^\s<>"'{}]+|\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,8}\b`;

export type TokenKind = 'tag' | 'printf' | 'mustache' | 'dollar' | 'brace' | 'entity' | 'url';

const ORDER: [TokenKind, string][] = [
  ['tag', TAG],
  ['mustache', MUSTACHE],
  ['dollar', DOLLAR_BRACE],
  ['brace', BRACE],
  ['printf', PRINTF],
  ['entity', ENTITY],
  ['url', URL],
];

interface Scanner {
  re: RegExp;
  kinds: TokenKind[];
}

function scanner(withBraces: boolean): Scanner {
  const parts = ORDER.filter(([k]) => withBraces || k === 'tag' || k === 'printf' || k === 'entity' || k === 'url');
  return { re: new RegExp(parts.map(([, p]) => `(${p})`).join('|'), 'g'), kinds: parts.map(([k]) => k) };
}

const WITH_BRACES = scanner(true);
/** A character every protected token contains: `<` tag, `{` braces, `%` printf, `&` entity, `:` URL, `@` e-mail. */
const MAY_PROTECT = /[<{%&:@]/;
const WITHOUT_BRACES = scanner(false);

export interface ProtectedToken {
  kind: TokenKind;
  text: string;
  start: number;
  end: number;
}

/**
 * Protected tokens of `text`, left to right, non-overlapping. `icu: true` leaves braces to the ICU validator
 * (mustache `{{x}}` is not valid ICU and is not looked for either).
 *
 * @example scanProtected('Hi %s <b>{name}</b>', { icu: false }).map((t) => t.text) // ['%s', '<b>', '{name}', '</b>']
 */
export function scanProtected(text: string, opts: { icu: boolean }): ProtectedToken[] {
  const out: ProtectedToken[] = [];
  // Every protected token holds one of these characters: most UI strings have none and skip the big alternation.
  if (!MAY_PROTECT.test(text)) return out;
  const { re, kinds } = opts.icu ? WITHOUT_BRACES : WITH_BRACES;
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const match = m[0];
    if (match.length === 0) {
      re.lastIndex++;
      continue;
    }
    let g = 1;
    while (m[g] === undefined && g < kinds.length) g++;
    out.push({ kind: kinds[g - 1]!, text: match, start: m.index, end: m.index + match.length });
  }
  return out;
}

export interface TagToken {
  name: string;
  kind: 'open' | 'close' | 'self';
}

/** Elements that never have a closing tag in HTML. */
export const VOID_ELEMENTS = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

/** Parse a tag token's name and kind (`<b>` open, `</b>` close, `<br/>` or `<br>` self). */
export function parseTag(tag: string): TagToken {
  const m = /^<(\/?)([A-Za-z][\w:.-]*)/.exec(tag);
  const name = (m?.[2] ?? '').toLowerCase();
  if (m?.[1] === '/') return { name, kind: 'close' };
  if (tag.endsWith('/>') || VOID_ELEMENTS.has(name)) return { name, kind: 'self' };
  return { name, kind: 'open' };
}
