import { describe, expect, it } from 'vitest';
import { joinUrl, retryAfter } from './http.ts';

describe('retryAfter', () => {
  it('reads delta-seconds and HTTP-dates', () => {
    expect(retryAfter('7')).toBe(7);
    expect(retryAfter('1.2')).toBe(2);
    const now = Date.parse('Sun, 22 Nov 2026 08:00:00 GMT');
    expect(retryAfter('Sun, 22 Nov 2026 08:00:30 GMT', now)).toBe(30);
    expect(retryAfter('Sun, 22 Nov 2026 07:00:00 GMT', now)).toBe(0);
  });
  it('ignores what it cannot read', () => {
    expect(retryAfter(null)).toBeUndefined();
    expect(retryAfter('soon')).toBeUndefined();
    expect(retryAfter('-3')).toBeUndefined();
  });
});

describe('joinUrl', () => {
  it('joins without doubled or missing slashes', () => {
    expect(joinUrl('http://h/v1/', '/chat/completions')).toBe('http://h/v1/chat/completions');
    expect(joinUrl('http://h', 'v1/messages')).toBe('http://h/v1/messages');
  });
});
