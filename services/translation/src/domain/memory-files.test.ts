import { describe, expect, it } from 'vitest';
import { type FileAnswerKey, fileAnswerBodyJson, fileAnswerDigest, fileAnswerJson } from './memory-files.ts';

const base: FileAnswerKey = {
  orgId: 'org-a',
  format: 'json',
  content: '{"a": "Hello"}\n',
  sourceLocale: 'en',
  targetLocale: 'pl',
  tier: 'cheap',
  modelOverride: undefined,
  upstreamModel: 'model-cheap',
  reportedModel: 'model-cheap',
  style: {},
  glossary: [],
};
const hex = (k: FileAnswerKey) => fileAnswerDigest(k).toString('hex');

describe('fileAnswerDigest', () => {
  it('is the same for the same request, and another for every parameter that changes the answer', () => {
    expect(hex({ ...base })).toBe(hex(base));
    const others: Partial<FileAnswerKey>[] = [
      { orgId: 'org-b' },
      { format: 'arb' },
      { content: '{"a": "Hello"} \n' },
      { content: '{"a": "Hellp"}\n' },
      { sourceLocale: 'en-GB' },
      { targetLocale: 'pl-PL' },
      { tier: 'top' },
      { modelOverride: 'ft-1' },
      { upstreamModel: 'model-cheap-2' },
      { reportedModel: 'ft-1' },
      { style: { tone: 'formal' } },
      { glossary: [{ term: 'Hello', target: null, neverTranslate: true }] },
    ];
    const digests = new Set([hex(base), ...others.map((o) => hex({ ...base, ...o }))]);
    expect(digests.size).toBe(others.length + 1);
  });

  it('keeps the parameters apart from the file (a parameter cannot spill into the content)', () => {
    expect(hex({ ...base, glossary: [], content: 'x' })).not.toBe(
      hex({ ...base, glossary: [] as unknown[], content: '' }),
    );
    expect(hex({ ...base, orgId: 'a', content: 'b' })).not.toBe(hex({ ...base, orgId: 'ab', content: '' }));
  });
});

describe('fileAnswerJson', () => {
  it('is the route’s answer: the stored parts with the format, the model and 0 tokens', () => {
    const stored = fileAnswerBodyJson(JSON.stringify('{"a": "Ħéłłø"}\n'), [{ code: 'x', message: 'y' }], 1);
    const sent = fileAnswerJson({ json: Buffer.from(stored), stale: false }, 'json', 'model-cheap');
    expect(JSON.parse(sent.toString('utf8'))).toEqual({
      content: '{"a": "Ħéłłø"}\n',
      format: 'json',
      model: 'model-cheap',
      tokensIn: 0,
      tokensOut: 0,
      issues: [{ code: 'x', message: 'y' }],
      fromMemory: 1,
    });
  });
});
