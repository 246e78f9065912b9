import { describe, expect, it } from 'vitest';
import { createProvider } from '../providers/index.ts';
import { estimateJudge } from './estimate.ts';
import type { JudgeInput } from './types.ts';

const estimateJudgeTokens = (input: JudgeInput, kind: 'openai' | 'pseudo') =>
  estimateJudge(createProvider({ kind, baseUrl: 'http://127.0.0.1:9', timeoutMs: 1000 }), input);

describe('estimateJudgeTokens', () => {
  const input = {
    sourceLocale: 'en',
    targetLocale: 'de',
    model: 'm',
    glossary: [],
    items: [{ id: 'a', source: 'x', target: 'y' }],
  };
  it('is zero for the heuristic judge and bounded for LLMs', () => {
    expect(estimateJudgeTokens(input, 'pseudo')).toEqual({ tokensIn: 0, maxTokensOut: 0 });
    const e = estimateJudgeTokens(input, 'openai');
    expect(e.tokensIn).toBeGreaterThan(100);
    expect(e.maxTokensOut).toBe(64 + 160);
  });
});
