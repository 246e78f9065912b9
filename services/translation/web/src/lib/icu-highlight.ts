// Splits a message into segments so an editor can show its ICU MessageFormat arguments apart from the text:
// `{name}`, the head of `{count, plural,` / `{g, select,`, the case keys and braces of plural and select, and `#`
// inside a plural. Apostrophe quoting follows ICU: `''` is one apostrophe, `'{…}'` is literal text. Only for
// display: the service's validators decide what is valid.

export type SegmentKind = 'text' | 'argument' | 'syntax';
export interface Segment {
  kind: SegmentKind;
  text: string;
}

const COMPLEX = /^\{\s*([^\s,{}]+)\s*,\s*(plural|selectordinal|select)\s*,/;
const SIMPLE = /^\{\s*([^\s,{}]+)\s*(,[^{}]*)?\}/;
const CASE = /^\s*(=\d+|[^\s{}]+)\s*\{/;

/**
 * @example highlightIcu('Hi {name}') // [{kind:'text',text:'Hi '},{kind:'argument',text:'{name}'}]
 */
export function highlightIcu(message: string): Segment[] {
  const out: Segment[] = [];
  const push = (kind: SegmentKind, text: string) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  };
  // Each open brace on the stack: 'plural' (its cases may hold '#'), 'select', or 'case' (a case's message).
  const stack: ('plural' | 'select' | 'case')[] = [];
  const inPluralCase = () =>
    stack.length >= 2 && stack[stack.length - 1] === 'case' && stack[stack.length - 2] === 'plural';
  let i = 0;
  while (i < message.length) {
    const rest = message.slice(i);
    const top = stack[stack.length - 1];
    if (top === 'plural' || top === 'select') {
      // Between cases: keys and their opening braces, or the argument's closing brace.
      if (rest[0] === '}') {
        push('syntax', '}');
        stack.pop();
        i++;
        continue;
      }
      const c = CASE.exec(rest);
      if (c) {
        push('syntax', c[0]);
        stack.push('case');
        i += c[0].length;
        continue;
      }
      push('text', rest[0]!);
      i++;
      continue;
    }
    const ch = rest[0]!;
    if (ch === "'") {
      if (rest[1] === "'") {
        push('text', "''");
        i += 2;
        continue;
      }
      if (rest[1] === '{' || rest[1] === '}' || (rest[1] === '#' && inPluralCase())) {
        const end = message.indexOf("'", i + 1);
        const stop = end === -1 ? message.length : end + 1;
        push('text', message.slice(i, stop));
        i = stop;
        continue;
      }
      push('text', ch);
      i++;
      continue;
    }
    if (ch === '{') {
      const complex = COMPLEX.exec(rest);
      if (complex) {
        push('argument', complex[0]);
        stack.push(complex[2] === 'select' ? 'select' : 'plural');
        i += complex[0].length;
        continue;
      }
      const simple = SIMPLE.exec(rest);
      if (simple) {
        push('argument', simple[0]);
        i += simple[0].length;
        continue;
      }
      push('text', ch);
      i++;
      continue;
    }
    if (ch === '}' && top === 'case') {
      push('syntax', '}');
      stack.pop();
      i++;
      continue;
    }
    if (ch === '#' && inPluralCase()) {
      push('argument', '#');
      i++;
      continue;
    }
    push('text', ch);
    i++;
  }
  return out;
}
