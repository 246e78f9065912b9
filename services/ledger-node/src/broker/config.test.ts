// The watcher and notification settings as the node loads them (names fixed by the issue, values
// validated when the configuration is built, errors naming the variable).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';

const dir = mkdtempSync(join(tmpdir(), 'watch-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const error = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    return (err as Error).message;
  }
  return 'no error';
};

describe('watcher settings', () => {
  it('no primary, no watcher; notifications default to none', () => {
    const c = loadConfig({});
    expect(c.watcher).toBeUndefined();
    expect(c.notify).toEqual({ webhookUrls: [], webhookSecret: undefined, syslog: undefined, takeoverGraceMs: 10_000 });
  });

  it('reads every broker setting into endpoints (normalized URLs, tenant, token, CA, poll interval)', () => {
    const ca = file('ca.pem', '-----BEGIN CERTIFICATE-----\n');
    const c = loadConfig({
      NODE_BROKER__PRIMARY_URL: 'https://orion.example:1026/',
      NODE_BROKER__FEDERATED_URLS: 'https://fed1.example:1026, https://fed2.example/broker/',
      NODE_BROKER__SERVICE: 'smartcity',
      NODE_BROKER__SERVICE_PATH: '/madrid/#',
      NODE_BROKER__TLS_CA_FILE: ca,
      NODE_BROKER__AUTH_TOKEN_FILE: file('token', 'pep-token-value\n'),
      NODE_BROKER__POLL_INTERVAL_MS: '5000',
    });
    expect(c.watcher?.primary).toEqual({
      url: 'https://orion.example:1026',
      role: 'primary',
      api: 'ngsi-v2',
      service: 'smartcity',
      servicePath: '/madrid/#',
      authToken: 'pep-token-value',
    });
    expect(c.watcher?.federated.map((f) => [f.url, f.role])).toEqual([
      ['https://fed1.example:1026', 'federated'],
      ['https://fed2.example/broker', 'federated'],
    ]);
    expect(c.watcher?.ca?.toString()).toContain('BEGIN CERTIFICATE');
    expect(c.watcher?.pollIntervalMs).toBe(5000);
  });

  it('refuses what would make a wrong watcher, naming the variable', () => {
    expect(error({ NODE_BROKER__FEDERATED_URLS: 'http://f' })).toContain('NODE_BROKER__PRIMARY_URL: required');
    expect(error({ NODE_BROKER__PRIMARY_URL: 'ftp://x' })).toContain('NODE_BROKER__PRIMARY_URL: want http or https');
    expect(error({ NODE_BROKER__PRIMARY_URL: 'http://u:p@x' })).toContain('credentials');
    expect(
      error({ NODE_BROKER__PRIMARY_URL: 'http://p', NODE_BROKER__FEDERATED_URLS: 'http://f,http://f/' }),
    ).toContain('NODE_BROKER__FEDERATED_URLS: http://f is listed twice');
    expect(
      error({ NODE_BROKER__PRIMARY_URL: 'http://p', NODE_BROKER__API: 'ngsi-ld', NODE_BROKER__SERVICE_PATH: '/a' }),
    ).toContain('NODE_BROKER__SERVICE_PATH: NGSI-LD has no service paths');
    expect(error({ NODE_BROKER__API: 'ngsi-v3' })).toContain('NODE_BROKER__API: expected ngsi-v2 or ngsi-ld');
    expect(error({ NODE_BROKER__SERVICE_PATH: 'relative' })).toContain('NODE_BROKER__SERVICE_PATH');
    expect(error({ NODE_BROKER__PRIMARY_URL: 'http://p', NODE_BROKER__TLS_CA_FILE: join(dir, 'missing') })).toContain(
      'NODE_BROKER__TLS_CA_FILE: cannot read file',
    );
    expect(error({ NODE_BROKER__AUTH_TOKEN: 'a', NODE_BROKER__AUTH_TOKEN_FILE: file('t2', 'b') })).toContain(
      'set either NODE_BROKER__AUTH_TOKEN or NODE_BROKER__AUTH_TOKEN_FILE',
    );
    expect(error({ NODE_BROKER__POLL_INTERVAL_MS: '10' })).toContain('NODE_BROKER__POLL_INTERVAL_MS');
  });
});

describe('notification settings', () => {
  it('reads webhook URLs, the secret from a file, the syslog target and the grace period', () => {
    const c = loadConfig({
      NODE_NOTIFY__WEBHOOK_URLS: 'https://hooks.example/a, http://10.0.0.5:9000/b',
      NODE_NOTIFY__WEBHOOK_SECRET_FILE: file('whsec', 'whsec_0123456789abcdef\n'),
      NODE_NOTIFY__SYSLOG: 'tcp://siem.example:6514',
      NODE_NOTIFY__TAKEOVER_GRACE_MS: '2500',
    });
    expect(c.notify).toEqual({
      webhookUrls: ['https://hooks.example/a', 'http://10.0.0.5:9000/b'],
      webhookSecret: 'whsec_0123456789abcdef',
      syslog: { protocol: 'tcp', host: 'siem.example', port: 6514 },
      takeoverGraceMs: 2500,
    });
  });

  it('refuses bad channels, naming the variable and never echoing the secret', () => {
    expect(error({ NODE_NOTIFY__WEBHOOK_URLS: 'nope' })).toContain('NODE_NOTIFY__WEBHOOK_URLS: not a URL');
    expect(error({ NODE_NOTIFY__WEBHOOK_URLS: 'ws://x' })).toContain('want http or https');
    expect(error({ NODE_NOTIFY__SYSLOG: 'syslog.example:514' })).toContain(
      'NODE_NOTIFY__SYSLOG: expected udp://host:port',
    );
    const short = error({ NODE_NOTIFY__WEBHOOK_SECRET: 'tooshort' });
    expect(short).toContain('NODE_NOTIFY__WEBHOOK_SECRET: must be at least 16 characters');
    expect(short).not.toContain('tooshort');
  });
});
