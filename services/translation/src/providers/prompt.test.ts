import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildTranslationPrompt, extractJsonObject, formatTranslationReply, parseTranslationReply } from './prompt.ts';
import type { ProviderRequest } from './types.ts';
import { UpstreamError } from './upstream-error.ts';

const req: ProviderRequest = {
  sourceLocale: 'en',
  targetLocale: 'ru',
  model: 'm',
  style: { tone: 'friendly', audience: 'developers', notes: '' },
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
  items: [
    {
      id: 'greeting',
      text: 'Hello {name}',
      isIcu: true,
      context: 'home page title',
      neighbors: ['Sign out'],
      examples: [{ source: 'Hello', target: 'Привет' }],
    },
    { id: 'plain', text: 'Save' },
  ],
  feedback: [{ itemId: 'greeting', code: 'icu_argument_missing', message: 'argument {name} missing' }],
};

describe('buildTranslationPrompt', () => {
  const prompt = buildTranslationPrompt(req);
  const task = JSON.parse(prompt.user);

  it('puts rules in the system message, with the target plural categories when ICU items exist', () => {
    expect(prompt.system).toContain('from en to ru');
    expect(prompt.system).toContain('{"translations": {"<item id>": "<translated text>"}}');
    expect(prompt.system).toContain('few, many, one, other');
    expect(prompt.system).toContain('"feedback"');
  });
  it('sends the whole task as one JSON document', () => {
    expect(task).toEqual({
      task: 'translate',
      sourceLocale: 'en',
      targetLocale: 'ru',
      pluralCategories: { cardinal: ['few', 'many', 'one', 'other'], ordinal: ['other'] },
      style: { tone: 'friendly', audience: 'developers' },
      glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
      feedback: [{ id: 'greeting', code: 'icu_argument_missing', message: 'argument {name} missing' }],
      items: [
        {
          id: 'greeting',
          text: 'Hello {name}',
          isIcu: true,
          context: 'home page title',
          neighbors: ['Sign out'],
          examples: [{ source: 'Hello', target: 'Привет' }],
        },
        { id: 'plain', text: 'Save' },
      ],
    });
  });
  it('leaves out what is empty', () => {
    const bare = buildTranslationPrompt({
      ...req,
      style: {},
      glossary: [],
      feedback: [],
      items: [{ id: 'a', text: 'x' }],
    });
    expect(JSON.parse(bare.user)).toEqual({
      task: 'translate',
      sourceLocale: 'en',
      targetLocale: 'ru',
      items: [{ id: 'a', text: 'x' }],
    });
    expect(bare.system).not.toContain('ICU');
  });
});

describe('parseTranslationReply', () => {
  const ids = ['a', 'b'];
  it('reads the asked-for shape, in request order', () => {
    expect(parseTranslationReply('{"translations": {"b": "B", "a": "A"}}', ids)).toEqual([
      { id: 'a', text: 'A' },
      { id: 'b', text: 'B' },
    ]);
  });
  it('round-trips formatTranslationReply', () => {
    const t = [
      { id: 'a', text: 'x "quoted"\n' },
      { id: 'b', text: '' },
    ];
    expect(parseTranslationReply(formatTranslationReply(t), ids)).toEqual(t);
  });
  it('accepts a code fence, prose around the object, an array form and a bare map', () => {
    expect(parseTranslationReply('```json\n{"translations": {"a": "A", "b": "B"}}\n```', ids)).toHaveLength(2);
    expect(parseTranslationReply('Here you go: {"translations": {"a": "A", "b": "B"}} Enjoy!', ids)).toHaveLength(2);
    expect(
      parseTranslationReply('{"translations": [{"id": "a", "text": "A"}, {"id": "b", "text": "B"}]}', ids),
    ).toHaveLength(2);
    expect(parseTranslationReply('{"a": "A", "b": "B"}', ids)).toHaveLength(2);
  });
  it('ignores extra ids', () => {
    expect(parseTranslationReply('{"translations": {"a": "A", "b": "B", "c": "C"}}', ids)).toHaveLength(2);
  });
  it('throws missing_items when an id is absent or not a string', () => {
    const miss = () => parseTranslationReply('{"translations": {"a": "A"}}', ids);
    expect(miss).toThrow(UpstreamError);
    expect(miss).toThrow(expect.objectContaining({ reason: 'missing_items' }));
    expect(() => parseTranslationReply('{"translations": {"a": "A", "b": 3}}', ids)).toThrow(
      expect.objectContaining({ reason: 'missing_items' }),
    );
  });
  it('throws malformed for what is not a JSON object', () => {
    for (const bad of ['', 'Sorry, I cannot', '[1,2]', '{"translations": "no"}', '{"translations": {"a": "A"']) {
      expect(() => parseTranslationReply(bad, ids)).toThrow(UpstreamError);
    }
    expect(() => parseTranslationReply('[1]', ids)).toThrow(expect.objectContaining({ reason: 'malformed' }));
  });
  it('never throws anything but UpstreamError, whatever the reply (fuzz)', () => {
    const reply = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      fc
        .dictionary(fc.constantFrom('a', 'b', 'c'), fc.jsonValue({ maxDepth: 2 }))
        .map((d) => JSON.stringify({ translations: d })),
    );
    fc.assert(
      fc.property(reply, (text) => {
        try {
          const out = parseTranslationReply(text, ids);
          expect(out.map((t) => t.id)).toEqual(ids);
          expect(out.every((t) => typeof t.text === 'string')).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(UpstreamError);
        }
      }),
      { numRuns: 500, seed: 3 },
    );
  });
});

describe('extractJsonObject', () => {
  it('prefers the whole text, then a fence, then the outer braces', () => {
    expect(extractJsonObject(' {"x":1} ')).toEqual({ x: 1 });
    expect(extractJsonObject('text ```\n{"x":2}\n``` more')).toEqual({ x: 2 });
    expect(extractJsonObject('a {"x":3} b')).toEqual({ x: 3 });
  });
});
