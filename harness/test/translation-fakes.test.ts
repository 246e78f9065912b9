import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_KNOBS,
  FAKE_API_KEY,
  type FakeUpstream,
  startFakeAnthropic,
  startFakeOpenAI,
} from '../src/translation-fakes/index.ts';

// The fakes themselves: they must answer bad requests the way the real APIs do.

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('fake OpenAI', () => {
  let fake: FakeUpstream;
  const auth = { authorization: `Bearer ${FAKE_API_KEY}` };
  const ok = { model: 'm', messages: [{ role: 'user', content: 'say hi' }] };
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.set(DEFAULT_KNOBS));

  it('binds to 127.0.0.1 and answers a chat completion', async () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const r = await post(`${fake.url}/chat/completions`, auth, ok);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'say hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: 2, total_tokens: expect.any(Number) },
    });
  });
  it('answers 401 without or with a wrong bearer key, in the OpenAI error shape', async () => {
    const none = await post(`${fake.url}/chat/completions`, {}, ok);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      error: {
        message: expect.stringContaining("didn't provide an API key"),
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    const wrong = await post(`${fake.url}/chat/completions`, { authorization: 'Bearer nope' }, ok);
    expect(wrong.status).toBe(401);
    expect((wrong.body.error as Record<string, unknown>).code).toBe('invalid_api_key');
  });
  it('answers 400 for bad bodies', async () => {
    const url = `${fake.url}/chat/completions`;
    expect((await post(url, auth, '{not json')).status).toBe(400);
    const noModel = await post(url, auth, { messages: ok.messages });
    expect([noModel.status, (noModel.body.error as Record<string, unknown>).param]).toEqual([400, 'model']);
    const noMessages = await post(url, auth, { model: 'm', messages: [] });
    expect([noMessages.status, (noMessages.body.error as Record<string, unknown>).param]).toEqual([400, 'messages']);
    const badRole = await post(url, auth, { model: 'm', messages: [{ role: 'robot', content: 'x' }] });
    expect(badRole.status).toBe(400);
    const badMax = await post(url, auth, { ...ok, max_tokens: 0 });
    expect(badMax.status).toBe(400);
    const noJsonWord = await post(url, auth, { ...ok, response_format: { type: 'json_object' } });
    expect(noJsonWord.status).toBe(400);
    expect((noJsonWord.body.error as Record<string, unknown>).message).toContain("must contain the word 'json'");
  });
  it('answers 404 on another path', async () => {
    expect((await post(`${fake.url}/completions`, auth, ok)).status).toBe(404);
  });
  it('cuts the reply at max_tokens with finish_reason length', async () => {
    const r = await post(`${fake.url}/chat/completions`, auth, {
      model: 'm',
      max_tokens: 3,
      messages: [{ role: 'user', content: 'one two three four five six seven' }],
    });
    const choice = (r.body.choices as { finish_reason: string; message: { content: string } }[])[0]!;
    expect(choice.finish_reason).toBe('length');
    expect(choice.message.content).toBe('one two three');
    expect((r.body.usage as Record<string, number>).completion_tokens).toBe(3);
  });
  it('counts requests and keeps the last one', async () => {
    const before = fake.requestCount;
    await post(`${fake.url}/chat/completions`, auth, { ...ok, model: 'last' });
    expect(fake.requestCount).toBe(before + 1);
    expect((fake.lastRequest!.body as Record<string, unknown>).model).toBe('last');
  });
  it('closes promptly with a request still waiting on latency', async () => {
    const slow = await startFakeOpenAI({ latencyMs: 10_000 });
    const pending = fetch(`${slow.url}/chat/completions`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify(ok),
    }).catch((e: unknown) => e);
    while (slow.requestCount === 0) await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    await slow.close();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('fake Anthropic', () => {
  let fake: FakeUpstream;
  const headers = { 'x-api-key': FAKE_API_KEY, 'anthropic-version': '2023-06-01' };
  const ok = { model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'say hi' }] };
  beforeAll(async () => {
    fake = await startFakeAnthropic();
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.set(DEFAULT_KNOBS));

  it('answers a message', async () => {
    const r = await post(`${fake.url}/v1/messages`, headers, { ...ok, system: [{ type: 'text', text: 'be brief' }] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'say hi' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: expect.any(Number), output_tokens: 2 },
    });
  });
  it('answers 401 authentication_error without or with a wrong key', async () => {
    for (const key of [undefined, 'wrong']) {
      const h: Record<string, string> = { 'anthropic-version': '2023-06-01', ...(key ? { 'x-api-key': key } : {}) };
      const r = await post(`${fake.url}/v1/messages`, h, ok);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String) } });
    }
  });
  it('answers 400 invalid_request_error for a missing version, max_tokens, or bad messages', async () => {
    const url = `${fake.url}/v1/messages`;
    const cases: [Record<string, string>, unknown][] = [
      [{ 'x-api-key': FAKE_API_KEY }, ok],
      [headers, { model: 'm', messages: ok.messages }],
      [headers, { ...ok, messages: [{ role: 'assistant', content: 'x' }] }],
      [
        headers,
        {
          ...ok,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'user', content: 'b' },
          ],
        },
      ],
      [headers, { ...ok, system: 42 }],
      [headers, '{oops'],
    ];
    for (const [h, body] of cases) {
      const r = await post(url, h, body);
      expect(r.status).toBe(400);
      expect((r.body.error as Record<string, unknown>).type).toBe('invalid_request_error');
    }
  });
  it('fails with the configured status and the matching error type', async () => {
    fake.set({ failStatus: 529 });
    const r = await post(`${fake.url}/v1/messages`, headers, ok);
    expect([r.status, (r.body.error as Record<string, unknown>).type]).toEqual([529, 'overloaded_error']);
  });
  it('cuts the reply at max_tokens with stop_reason max_tokens', async () => {
    const r = await post(`${fake.url}/v1/messages`, headers, {
      ...ok,
      max_tokens: 2,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(r.body.stop_reason).toBe('max_tokens');
    expect((r.body.usage as Record<string, number>).output_tokens).toBe(2);
  });
});
