import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({});
    expect(c.HTTP__PORT).toBe(8080);
    expect(c.LEADER_ELECTION__ENABLED).toBe(true);
    expect(c.RECONCILE__CONCURRENCY).toBe(4);
  });
  it('names the bad variable in one line', () => {
    expect(() => loadConfig({ HTTP__PORT: 'eighty' })).toThrow(/^invalid configuration: HTTP__PORT: /);
    expect(() => loadConfig({ LEADER_ELECTION__ENABLED: 'yes' })).toThrow(/LEADER_ELECTION__ENABLED/);
    expect(() =>
      loadConfig({ LEADER_ELECTION__LEASE_DURATION_SECONDS: '5', LEADER_ELECTION__RENEW_DEADLINE_SECONDS: '10' }),
    ).toThrow(/RENEW_DEADLINE/);
  });
});
