// The notification channels from the node's settings: webhook URLs with the signing secret, the
// syslog target, and the takeover grace period. Errors name the variable (ConfigError).
import type { NodeSettings } from '@scriptorium/ledger-protocol';
import { ConfigError } from '../errors.ts';
import { parseSyslogTarget, type SyslogTarget } from './syslog.ts';

export interface NotifyConfig {
  webhookUrls: string[];
  /** Never logged. */
  webhookSecret: string | undefined;
  syslog: SyslogTarget | undefined;
  takeoverGraceMs: number;
}

export function notifyConfig(s: NodeSettings): NotifyConfig {
  const webhookUrls: string[] = [];
  for (const part of s.NODE_NOTIFY__WEBHOOK_URLS.split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    let u: URL;
    try {
      u = new URL(part);
    } catch {
      throw new ConfigError('NODE_NOTIFY__WEBHOOK_URLS', `not a URL: ${JSON.stringify(part.slice(0, 100))}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new ConfigError('NODE_NOTIFY__WEBHOOK_URLS', `want http or https, not ${u.protocol}`);
    if (webhookUrls.includes(u.href)) throw new ConfigError('NODE_NOTIFY__WEBHOOK_URLS', `${u.host} is listed twice`);
    webhookUrls.push(u.href);
  }
  let syslog: SyslogTarget | undefined;
  if (s.NODE_NOTIFY__SYSLOG) {
    const t = parseSyslogTarget(s.NODE_NOTIFY__SYSLOG);
    if ('error' in t) throw new ConfigError('NODE_NOTIFY__SYSLOG', t.error);
    syslog = t;
  }
  return {
    webhookUrls,
    webhookSecret: s.NODE_NOTIFY__WEBHOOK_SECRET,
    syslog,
    takeoverGraceMs: s.NODE_NOTIFY__TAKEOVER_GRACE_MS,
  };
}
