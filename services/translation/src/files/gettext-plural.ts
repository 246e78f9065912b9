// gettext's plural system, derived from the one source of CLDR data the service uses (`Intl.PluralRules`), never from
// a table: the PO forms of a locale are the CLDR categories that integers reach (gettext's `n` is an integer), in
// CLDR order, and the `Plural-Forms` expression is synthesized from `Intl.PluralRules.select` and then checked
// against it. The parser below reads the expressions of incoming PO headers (C syntax, no eval).
import { CATEGORY_ORDER } from './icu-plural.ts';

// ── Expressions: parse and evaluate gettext's C subset ────────────────────────────────────────────────────────────

type Expr =
  | { k: 'n' }
  | { k: 'num'; v: number }
  | { k: 'not'; a: Expr }
  | { k: 'bin'; op: string; a: Expr; b: Expr }
  | { k: 'cond'; c: Expr; a: Expr; b: Expr };

// Binding power of the binary operators (C precedence).
const BINARY: Record<string, number> = {
  '||': 1,
  '&&': 2,
  '==': 3,
  '!=': 3,
  '<': 4,
  '>': 4,
  '<=': 4,
  '>=': 4,
  '+': 5,
  '-': 5,
  '*': 6,
  '/': 6,
  '%': 6,
};

const TOKEN = /\s*(\d{1,9}|n|\|\||&&|==|!=|<=|>=|[<>+\-*/%!?:()])/y;

function tokenize(text: string): string[] | null {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < text.length) {
    if (/^\s*$/.test(text.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const m = TOKEN.exec(text);
    if (!m) return null;
    tokens.push(m[1]!);
    pos = TOKEN.lastIndex;
  }
  return tokens;
}

/** Parses a gettext plural expression; null when it is not one (unknown token, unbalanced, too deep). */
export function parsePluralExpression(text: string): Expr | null {
  const tokens = tokenize(text);
  if (!tokens || tokens.length === 0 || tokens.length > 2000) return null;
  let i = 0;
  let depth = 0;
  const fail = (): never => {
    throw new SyntaxError('plural expression');
  };
  const primary = (): Expr => {
    if (++depth > 200) fail();
    const t = tokens[i++];
    let e: Expr;
    if (t === 'n') e = { k: 'n' };
    else if (t !== undefined && /^\d+$/.test(t)) e = { k: 'num', v: Number(t) };
    else if (t === '!') e = { k: 'not', a: primary() };
    else if (t === '(') {
      e = conditional();
      if (tokens[i++] !== ')') fail();
    } else return fail();
    depth--;
    return e;
  };
  const binary = (min: number): Expr => {
    let left = primary();
    for (;;) {
      const op = tokens[i];
      const bp = op === undefined ? undefined : BINARY[op];
      if (bp === undefined || bp < min) return left;
      i++;
      left = { k: 'bin', op: op!, a: left, b: binary(bp + 1) };
    }
  };
  const conditional = (): Expr => {
    const c = binary(1);
    if (tokens[i] !== '?') return c;
    i++;
    const a = conditional();
    if (tokens[i++] !== ':') fail();
    return { k: 'cond', c, a, b: conditional() };
  };
  try {
    const e = conditional();
    return i === tokens.length ? e : null;
  } catch {
    return null;
  }
}

/** The value of `e` for `n` (C semantics on non-negative integers; division by zero gives 0). */
export function evaluatePlural(e: Expr, n: number): number {
  switch (e.k) {
    case 'n':
      return n;
    case 'num':
      return e.v;
    case 'not':
      return evaluatePlural(e.a, n) ? 0 : 1;
    case 'cond':
      return evaluatePlural(e.c, n) ? evaluatePlural(e.a, n) : evaluatePlural(e.b, n);
    case 'bin': {
      const a = evaluatePlural(e.a, n);
      if (e.op === '&&') return a && evaluatePlural(e.b, n) ? 1 : 0;
      if (e.op === '||') return a || evaluatePlural(e.b, n) ? 1 : 0;
      const b = evaluatePlural(e.b, n);
      switch (e.op) {
        case '==':
          return a === b ? 1 : 0;
        case '!=':
          return a !== b ? 1 : 0;
        case '<':
          return a < b ? 1 : 0;
        case '>':
          return a > b ? 1 : 0;
        case '<=':
          return a <= b ? 1 : 0;
        case '>=':
          return a >= b ? 1 : 0;
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return b === 0 ? 0 : Math.trunc(a / b);
        default:
          return b === 0 ? 0 : a % b;
      }
    }
  }
}

export interface PluralForms {
  nplurals: number;
  plural: string;
  /** The form index for `n`. */
  index(n: number): number;
}

/**
 * Reads a `Plural-Forms` header value (`nplurals=3; plural=(n==1 ? 0 : …);`); the reason when it is broken; null
 * for xgettext's template value (`nplurals=INTEGER; plural=EXPRESSION;`).
 * @example parsePluralForms('nplurals=2; plural=(n != 1);').index(1) // 0
 */
export function parsePluralForms(value: string): PluralForms | { error: string } | null {
  // xgettext's template placeholder: a POT has no plural system yet.
  if (/^\s*nplurals\s*=\s*INTEGER\s*;\s*plural\s*=\s*EXPRESSION\s*;?\s*$/.test(value)) return null;
  const m = /^\s*nplurals\s*=\s*(\d{1,2})\s*;\s*plural\s*=\s*(.+?)\s*;?\s*$/s.exec(value);
  if (!m) return { error: 'Plural-Forms is not "nplurals=N; plural=EXPRESSION;"' };
  const nplurals = Number(m[1]);
  if (nplurals < 1 || nplurals > 6) return { error: `Plural-Forms nplurals=${nplurals} is outside 1..6` };
  const expr = parsePluralExpression(m[2]!.replace(/;\s*$/, ''));
  if (!expr) return { error: 'Plural-Forms plural= is not a valid expression' };
  return {
    nplurals,
    plural: m[2]!,
    index: (n) => {
      const v = evaluatePlural(expr, n);
      return v === 0 || v === 1 ? v : Math.min(Math.max(0, v), nplurals - 1);
    },
  };
}

// ── Synthesis from Intl.PluralRules ───────────────────────────────────────────────────────────────────────────────

const SMALL = 200;
const RESIDUE_PROBE = [200, 1100] as const;
const MILLIONS = [1e6, 2e6, 5e6, 1e7, 1e9];

/** Runs of consecutive numbers of a sorted set. */
function runs(values: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (const v of values) {
    const last = out.at(-1);
    if (last && last[1] === v - 1) last[1] = v;
    else out.push([v, v]);
  }
  return out;
}

const inRuns = (x: string, values: number[]) =>
  runs(values)
    .map(([a, b]) => (a === b ? `${x}==${a}` : `(${x}>=${a} && ${x}<=${b})`))
    .join(' || ');
const outOfRuns = (x: string, values: number[]) =>
  runs(values)
    .map(([a, b]) => (a === b ? `${x}!=${a}` : `(${x}<${a} || ${x}>${b})`))
    .join(' && ');
const group = (parts: string[], op: '||' | '&&') => {
  const kept = parts.filter(Boolean);
  if (kept.length === 0) return '';
  return kept.length === 1 ? kept[0]! : kept.map((p) => `(${p})`).join(` ${op} `);
};

/** A condition on `n % 100` true exactly for residues `set` (by last digit with exceptions where shorter). */
function residueCondition(set: Set<number>): string {
  const all = [...set].sort((a, b) => a - b);
  if (all.length === 0) return '';
  const digits = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].filter(
    (d) => Array.from({ length: 10 }, (_, t) => t * 10 + d).filter((r) => set.has(r)).length >= 8,
  );
  const byDigit = Array.from({ length: 100 }, (_, r) => r).filter((r) => digits.includes(r % 10));
  const minus = byDigit.filter((r) => !set.has(r));
  const plus = all.filter((r) => !digits.includes(r % 10));
  const plain = inRuns('n%100', all);
  if (digits.length === 0 || runs(minus).length + runs(plus).length >= runs(all).length) return plain;
  const viaDigit = group([inRuns('n%10', digits), minus.length ? outOfRuns('n%100', minus) : ''], '&&');
  return group([viaDigit, plus.length ? inRuns('n%100', plus) : ''], '||');
}

interface Synthesis {
  categories: string[];
  nplurals: number;
  plural: string;
}

const synthesized = new Map<string, Synthesis>();

/**
 * The gettext plural system of `locale` from `Intl.PluralRules`: the categories integers reach (CLDR order; the
 * PO form i is categories[i]) and the `plural=` expression, verified against `select` on 0…10,000 and large
 * numbers. Throws for an invalid locale tag, or (never seen) when no expression of this shape matches.
 *
 * @example gettextPlurals('ru') // { categories: ['one', 'few', 'many'], nplurals: 3, plural: '…' }
 */
export function gettextPlurals(locale: string): Synthesis {
  const cached = synthesized.get(locale);
  if (cached) return cached;
  const rules = new Intl.PluralRules(locale, { type: 'cardinal' });
  const select = (n: number) => rules.select(n);
  const probes = [...Array.from({ length: RESIDUE_PROBE[1] }, (_, n) => n), ...MILLIONS];
  const reached = new Set(probes.map(select));
  const categories = CATEGORY_ORDER.filter((c) => reached.has(c));
  const claimed = new Set<number>();
  const branches: string[] = [];
  for (const category of categories.slice(0, -1)) {
    const parts: string[] = [];
    // Multiples of a million (French, Spanish, Italian "many"): tested first, the other rules are for the rest.
    const millions = MILLIONS.filter((n) => !claimed.has(n) && select(n) === category);
    if (millions.length === MILLIONS.length && select(100) !== category) {
      parts.push('n!=0 && n%1000000==0');
      for (const n of MILLIONS) claimed.add(n);
    }
    const residues = new Set<number>();
    for (let r = 0; r < 100; r++) {
      const probe = RESIDUE_PROBE[0] + r;
      if (!claimed.has(probe) && select(probe) === category) residues.add(r);
    }
    const small = Array.from({ length: SMALL }, (_, n) => n).filter((n) => !claimed.has(n));
    const plus = small.filter((n) => select(n) === category && !residues.has(n % 100));
    const minus = small.filter((n) => select(n) !== category && residues.has(n % 100));
    parts.push(
      group(
        [
          plus.length ? inRuns('n', plus) : '',
          group([residueCondition(residues), minus.length ? outOfRuns('n', minus) : ''], '&&'),
        ],
        '||',
      ),
    );
    branches.push(group(parts, '||'));
    for (const n of probes) if (select(n) === category) claimed.add(n);
  }
  let plural = String(categories.length - 1);
  for (let i = branches.length - 1; i >= 0; i--) plural = `${branches[i]} ? ${i} : ${plural}`;
  const synthesis = { categories, nplurals: categories.length, plural: branches.length === 0 ? '0' : plural };
  verify(synthesis, select);
  synthesized.set(locale, synthesis);
  return synthesis;
}

function verify(s: Synthesis, select: (n: number) => string): void {
  const expr = parsePluralExpression(s.plural);
  if (!expr) throw new Error('synthesized plural expression does not parse');
  for (const n of [...Array.from({ length: 10_001 }, (_, i) => i), ...MILLIONS, 1_000_001, 123_456_789]) {
    if (s.categories[evaluatePlural(expr, n)] !== select(n)) {
      throw new Error(`synthesized plural expression disagrees with Intl.PluralRules at ${n}`);
    }
  }
}

/** The `Plural-Forms` header value for `locale`. */
export const pluralFormsHeader = (locale: string): string => {
  const s = gettextPlurals(locale);
  return `nplurals=${s.nplurals}; plural=${s.nplurals === 1 ? '0' : `(${s.plural})`};`;
};
