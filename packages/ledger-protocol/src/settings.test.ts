import { describe, expect, it } from 'vitest';
import { NODE_SETTING_NAMES, nodeSettings, SECRET_SETTINGS } from './settings.ts';

describe('node settings', () => {
  it('an empty environment gives every default', () => {
    const d = nodeSettings.parse({});
    expect(d).toMatchObject({
      NODE_CONSENSUS__BIND_PORT: 8000,
      NODE_CONSENSUS__ROUND_TIMEOUT_MS: 2000,
      NODE_CONSENSUS__MAX_BLOCK_RECORDS: 2000,
      NODE_DEBUG_API: false,
      NODE_TLS__MODE: 'server',
      MAX_BODY_BYTES: 8 * 1024 * 1024,
      LOG_LEVEL: 'info',
    });
  });

  it('names every setting once, plus <NAME>_FILE for each secret', () => {
    expect(new Set(NODE_SETTING_NAMES).size).toBe(NODE_SETTING_NAMES.length);
    for (const name of Object.keys(nodeSettings.shape)) expect(NODE_SETTING_NAMES).toContain(name);
    for (const secret of SECRET_SETTINGS) {
      expect(Object.keys(nodeSettings.shape)).toContain(secret);
      expect(NODE_SETTING_NAMES).toContain(`${secret}_FILE`);
    }
    for (const name of NODE_SETTING_NAMES) expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
  });

  it('refuses out-of-range numbers and unknown enum values, naming the variable', () => {
    const r = nodeSettings.safeParse({ NODE_CONSENSUS__BIND_PORT: '70000', NODE_TLS__MODE: 'both' });
    expect(r.success).toBe(false);
    const paths = r.error?.issues.map((i) => i.path[0]);
    expect(paths).toEqual(expect.arrayContaining(['NODE_CONSENSUS__BIND_PORT', 'NODE_TLS__MODE']));
    expect(nodeSettings.safeParse({ NODE_CONSENSUS__MAX_BLOCK_RECORDS: '10001' }).success).toBe(false);
  });
});
