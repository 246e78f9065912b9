// The same translate contract through the Anthropic provider and the fake Anthropic messages server (real local HTTP).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batch, bearer, type Harness, startHarness } from './harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ provider: 'anthropic' });
});
afterAll(async () => h?.close());

describe('Anthropic upstream', () => {
  it('200 with reported usage, 502 on failure with nothing charged', async () => {
    const { apiKey, orgId } = await h.account();
    h.fake!.set({ usage: { tokensIn: 50, tokensOut: 20 } });
    const ok = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(2),
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ tokensIn: 50, tokensOut: 20, issues: [] });
    expect(h.fake!.lastRequest!.path).toContain('/messages');
    h.fake!.set({ usage: null, failStatus: 529 });
    const failed = await h.app.inject({
      method: 'POST',
      url: '/api/v1/translate',
      headers: bearer(apiKey),
      payload: batch(2),
    });
    h.fake!.set({ failStatus: null });
    expect(failed.statusCode).toBe(502);
    const [b] = await h.database.query<{ spent: number; reserved: number }>(
      'SELECT spent_micros::int AS spent, reserved_micros::int AS reserved FROM budget_usage WHERE scope = $1',
      [`org:${orgId}`],
    );
    expect(b).toEqual({ spent: 50 + 40, reserved: 0 });
  });
});
