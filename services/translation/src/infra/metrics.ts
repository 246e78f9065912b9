// prom-client metrics, names prefixed `scriptorium_translation_`. One registry per app (tests build many apps).
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { Metrics } from '../context.ts';

export function createMetrics(collectDefaults: boolean): Metrics {
  const registry = new Registry();
  // The event-loop lag histogram samples every 100 ms, not prom-client's 10 ms: a timer 100 times a second kept an
  // idle process awake (~11 % of an idle validator's CPU); a block of the loop still shows in full.
  if (collectDefaults)
    collectDefaultMetrics({
      register: registry,
      prefix: 'scriptorium_translation_',
      eventLoopMonitoringPrecision: 100,
    });
  const p = 'scriptorium_translation_';
  return {
    registry,
    httpRequests: new Counter({
      name: `${p}http_requests_total`,
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: `${p}http_request_duration_seconds`,
      help: 'HTTP request duration',
      labelNames: ['route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    upstreamCalls: new Counter({
      name: `${p}upstream_calls_total`,
      help: 'Metered calls to the LLM provider by usage kind (translate, judge, playground) and outcome',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    providerRequests: new Counter({
      name: `${p}provider_requests_total`,
      help: 'Requests sent to the translation provider (a metered call of a file is several)',
      labelNames: ['kind'],
      registers: [registry],
    }),
    tokens: new Counter({
      name: `${p}tokens_total`,
      help: 'Tokens reported by the provider (in, out)',
      labelNames: ['direction'],
      registers: [registry],
    }),
    spendMicros: new Counter({
      name: `${p}spend_micros_total`,
      help: 'Money charged, in micro-units',
      labelNames: ['kind'],
      registers: [registry],
    }),
    meterRefusals: new Counter({
      name: `${p}meter_refusals_total`,
      help: 'Requests refused with 402 (quota, budget, playground_budget)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: `${p}rate_limited_total`,
      help: 'Requests refused with 429',
      labelNames: ['route'],
      registers: [registry],
    }),
    jobs: new Counter({
      name: `${p}jobs_total`,
      help: 'Jobs run by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    meterBatchSize: new Histogram({
      name: `${p}meter_batch_size`,
      help: 'Requests per metering statement (admit: rate limit + reservation; settle), group commit',
      labelNames: ['kind'],
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
  };
}
