import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has working defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(3000);
    expect(c.provider.kind).toBe('pseudo');
    expect(c.rateLimits.perMinute['/api/v1/translate']).toBe(600);
    expect(c.translationUrl).toBe('http://127.0.0.1:3000');
    expect(loadConfig({ PROVIDER__KIND: 'anthropic' }).provider.baseUrl).toBe('https://api.anthropic.com');
    expect(loadConfig({ PROVIDER__KIND: 'openai' }).provider.baseUrl).toBe('https://api.openai.com/v1');
  });

  it('reads nested names, JSON plans and rate limits', () => {
    const c = loadConfig({
      PROVIDER__KIND: 'openai',
      PROVIDER__BASE_URL: 'http://127.0.0.1:1/v1',
      PROVIDER__MODELS__CHEAP: 'gpt-4o-mini',
      PLANS: '[{"name":"pro","tokensPerPeriod":5,"dailyBudgetCents":100}]',
      RATE_LIMITS: '[{"route":"/api/v1/judge","requestsPerMinute":7}]',
      TRUST_PROXY: '2',
    });
    expect(c.models.cheap).toBe('gpt-4o-mini');
    expect(c.plans).toEqual([{ name: 'pro', tokensPerPeriod: 5, periodDays: 30, dailyBudgetCents: 100 }]);
    expect(c.rateLimits.perMinute['/api/v1/judge']).toBe(7);
    expect(c.trustProxy).toBe(2);
  });

  it('fails with one line naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'abc' }, /^PORT: /],
      [{ PORT: '70000' }, /^PORT: /],
      [{ WORKER_SECRET: 'short' }, /^WORKER_SECRET: /],
      [{ PROVIDER__KIND: 'gemini' }, /^PROVIDER__KIND: /],
      [{ PROVIDER__KIND: 'openai', PROVIDER__BASE_URL: 'not a url' }, /^PROVIDER__BASE_URL: /],
      [{ MODEL_PRICES: '{"m": {"in": -1}}' }, /^MODEL_PRICES: /],
      [{ PLANS: 'not json' }, /^PLANS: /],
      [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: /],
      [{ WORKER_SECRET_FILE: '/does/not/exist' }, /^WORKER_SECRET_FILE: /],
    ];
    for (const [env, pattern] of cases) {
      expect(() => loadConfig(env)).toThrowError(pattern);
      try {
        loadConfig(env);
      } catch (e) {
        expect((e as Error).message).not.toContain('\n');
      }
    }
  });
});
