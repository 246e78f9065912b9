import { describe, expect, it } from 'vitest';
import { createProvider } from './create-provider.ts';
import { UpstreamError } from './upstream-error.ts';

describe('createProvider', () => {
  it('builds each kind', () => {
    expect(createProvider({ kind: 'pseudo', timeoutMs: 1000 }).name).toBe('pseudo');
    expect(createProvider({ kind: 'openai', baseUrl: 'http://127.0.0.1:1/v1', timeoutMs: 1000 }).name).toBe('openai');
    expect(
      createProvider({ kind: 'anthropic', baseUrl: 'https://api.anthropic.com', apiKey: 'k', timeoutMs: 1000 }).name,
    ).toBe('anthropic');
  });
  it('rejects bad options when built, naming the field but not the value', () => {
    expect(() => createProvider({ kind: 'openai', timeoutMs: 1000 })).toThrow('baseUrl is required');
    expect(() => createProvider({ kind: 'openai', baseUrl: 'ftp://x', timeoutMs: 1000 })).toThrow('http(s)');
    expect(() => createProvider({ kind: 'openai', baseUrl: 'not a url', timeoutMs: 1000 })).toThrow('not a URL');
    expect(() => createProvider({ kind: 'anthropic', baseUrl: 'http://x', timeoutMs: 1000 })).toThrow(
      'apiKey is required',
    );
    expect(() => createProvider({ kind: 'pseudo', timeoutMs: 0 })).toThrow('timeoutMs');
    expect(() => createProvider({ kind: 'pseudo', timeoutMs: 10, maxOutputTokens: 0 })).toThrow('maxOutputTokens');
    expect(() => createProvider({ kind: 'nope' as 'pseudo', timeoutMs: 10 })).toThrow('provider kind');
  });
});

describe('pseudo provider', () => {
  const p = createProvider({ kind: 'pseudo', timeoutMs: 1000 });
  const req = {
    sourceLocale: 'en',
    targetLocale: 'de',
    model: 'pseudo-1',
    style: {},
    glossary: [],
    items: [
      { id: 'a', text: 'Save' },
      { id: 'b', text: 'Hello {name}', isIcu: true },
    ],
  };
  it('translates every item and reports non-zero honest token counts', async () => {
    const r = await p.translate(req);
    expect(r.translations).toEqual([
      { id: 'a', text: '[Ŝåṽé ~]' },
      { id: 'b', text: '[Ĥéļļö {name} ~~]' },
    ]);
    expect(r.model).toBe('pseudo-1');
    expect(r.tokensIn).toBeGreaterThan(50);
    expect(r.tokensOut).toBeGreaterThan(5);
  });
  it('honours an aborted signal', async () => {
    await expect(p.translate(req, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(UpstreamError);
  });
  it('answers raw completions deterministically', async () => {
    const a = await p.complete({ system: 's', user: 'Hi', model: 'x' });
    expect(a).toEqual({ text: '[Ĥî ~]', model: 'x', tokensIn: expect.any(Number), tokensOut: expect.any(Number) });
  });
});
