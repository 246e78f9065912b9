// The watcher's configuration from the node's settings: the primary and federated brokers as
// endpoints (normalized URLs, API, tenant, token), the CA bundle, the mode (poll or subscribe) and its
// intervals, and the base URL brokers notify this node at. Undefined when NODE_BROKER__PRIMARY_URL is unset
// (no watcher). Errors name the variable (ConfigError).
import { readFileSync } from 'node:fs';
import type { NodeSettings } from '@scriptorium/ledger-protocol';
import { ConfigError } from '../errors.ts';
import { type BrokerEndpoint, normalizeBrokerUrl } from './endpoint.ts';

export interface WatcherConfig {
  primary: BrokerEndpoint;
  federated: BrokerEndpoint[];
  /** PEM bundle from NODE_BROKER__TLS_CA_FILE. */
  ca: Buffer | undefined;
  pollIntervalMs: number;
  /** `poll`: full reads every poll interval; `subscribe`: notifications, and a sweep every sweep interval. */
  mode: 'poll' | 'subscribe';
  sweepIntervalMs: number;
  /** Subscribe mode: the base URL brokers send notifications to (no trailing slash). */
  notifyUrl: string;
  /** Subscribe mode: how often each subscription is checked and, when forgotten, made again. */
  subscriptionCheckMs: number;
}

function url(variable: string, raw: string): string {
  const u = normalizeBrokerUrl(raw);
  if (typeof u !== 'string') throw new ConfigError(variable, u.error);
  return u;
}

/**
 * `defaultNotifyUrl`: the node's own advertised base URL, used when NODE_BROKER__NOTIFY_URL is unset.
 * @example watcherConfig(settings, 'https://10.0.0.2:8000')?.federated.map((b) => b.url)
 */
export function watcherConfig(s: NodeSettings, defaultNotifyUrl: string): WatcherConfig | undefined {
  if (!s.NODE_BROKER__PRIMARY_URL) {
    if (s.NODE_BROKER__FEDERATED_URLS.trim())
      throw new ConfigError('NODE_BROKER__PRIMARY_URL', 'required when NODE_BROKER__FEDERATED_URLS is set');
    return undefined;
  }
  if (s.NODE_BROKER__API === 'ngsi-ld' && s.NODE_BROKER__SERVICE_PATH)
    throw new ConfigError('NODE_BROKER__SERVICE_PATH', 'NGSI-LD has no service paths (use NODE_BROKER__SERVICE)');
  const common = {
    api: s.NODE_BROKER__API,
    service: s.NODE_BROKER__SERVICE,
    servicePath: s.NODE_BROKER__SERVICE_PATH,
    authToken: s.NODE_BROKER__AUTH_TOKEN,
  };
  const primary: BrokerEndpoint = {
    ...common,
    role: 'primary',
    url: url('NODE_BROKER__PRIMARY_URL', s.NODE_BROKER__PRIMARY_URL),
  };
  const federated: BrokerEndpoint[] = [];
  for (const part of s.NODE_BROKER__FEDERATED_URLS.split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const u = url('NODE_BROKER__FEDERATED_URLS', part);
    if (u === primary.url || federated.some((f) => f.url === u))
      throw new ConfigError('NODE_BROKER__FEDERATED_URLS', `${u} is listed twice (or is the primary)`);
    federated.push({ ...common, role: 'federated', url: u });
  }
  let ca: Buffer | undefined;
  if (s.NODE_BROKER__TLS_CA_FILE) {
    try {
      ca = readFileSync(s.NODE_BROKER__TLS_CA_FILE);
    } catch (err) {
      throw new ConfigError(
        'NODE_BROKER__TLS_CA_FILE',
        `cannot read file ${s.NODE_BROKER__TLS_CA_FILE}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      );
    }
  }
  const notifyUrl = url('NODE_BROKER__NOTIFY_URL', s.NODE_BROKER__NOTIFY_URL ?? defaultNotifyUrl);
  return {
    primary,
    federated,
    ca,
    pollIntervalMs: s.NODE_BROKER__POLL_INTERVAL_MS,
    mode: s.NODE_BROKER__MODE,
    sweepIntervalMs: s.NODE_BROKER__SWEEP_INTERVAL_MS,
    notifyUrl,
    subscriptionCheckMs: s.NODE_BROKER__SUBSCRIPTION_CHECK_MS,
  };
}
