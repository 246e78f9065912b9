import fc from 'fast-check';
import { type Node, parseTree } from 'jsonc-parser';
import { describe, expect, it } from 'vitest';
import { validJsonTree } from './json-tree.ts';
import { fixture, mutation } from './testing.ts';
import { FileParseError } from './types.ts';

/** A node without the fields the two parsers need not share (the parent link, the colon's offset). */
function plain(node: Node): unknown {
  return {
    type: node.type,
    offset: node.offset,
    length: node.length,
    ...('value' in node ? { value: node.value } : {}),
    ...(node.children ? { children: node.children.map(plain) } : {}),
  };
}

/** The fast tree is jsonc-parser's tree whenever JSON.parse accepts the text; null exactly when it refuses it. */
function agrees(text: string): boolean {
  const fast = validJsonTree(text, 200);
  let valid = true;
  try {
    JSON.parse(text);
  } catch {
    valid = false;
  }
  expect(fast !== null).toBe(valid);
  if (!fast) return false;
  const errors: unknown[] = [];
  const general = parseTree(text, errors as never[], { disallowComments: true, allowTrailingComma: false });
  expect(errors).toEqual([]);
  expect(plain(fast)).toEqual(plain(general!));
  return true;
}

describe('validJsonTree: the tree of valid JSON, as jsonc-parser builds it', () => {
  it('the fixtures, escapes, every kind of value, duplicate keys, whitespace', () => {
    for (const text of [
      fixture('nested.json'),
      fixture('app_en.arb'),
      '{"a": "b", "a": {"c\\"d\\\\": ["x", 1, -2.5e3, true, false, null, {}, []]}, "e\\u00e9\\n": "\\\\\\""}',
      ' \r\n\t{ "k" : "v" } \n',
      '["top", "level"]',
      '"just a string"',
      '12',
    ])
      expect(agrees(text), text).toBe(true);
  });

  it('random JSON documents, compact and indented', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 2, '\t'), (value, indent) => {
        expect(agrees(JSON.stringify(value, null, indent))).toBe(true);
      }),
      { numRuns: 500, seed: 25 },
    );
  });

  it('mutated fixtures: the same tree, or null when JSON.parse refuses the text', () => {
    let valid = 0;
    for (const name of ['nested.json', 'app_en.arb']) {
      fc.assert(
        fc.property(mutation(fixture(name)), (text) => {
          if (agrees(text)) valid++;
        }),
        { numRuns: 500, seed: 2025 },
      );
    }
    expect(valid).toBeGreaterThan(50);
  });

  it('refuses containers nested deeper than the limit with the line of the first one too deep', () => {
    const deep = (n: number) => `{\n"a":${'['.repeat(n - 1)}1${']'.repeat(n - 1)}}`;
    expect(validJsonTree(deep(200), 200)).not.toBeNull();
    try {
      validJsonTree(deep(201), 200);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(FileParseError);
      expect((e as FileParseError).line).toBe(2);
      expect((e as FileParseError).reason).toBe('nested deeper than 200 levels');
    }
  });
});
