import { hostname } from 'node:os';
import { z } from 'zod';

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const int = (def: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(def);

export const configSchema = z.object({
  KUBECONFIG: z.string().optional(),
  POD_NAMESPACE: z.string().min(1).default('default'),
  POD_NAME: z.string().min(1).default(hostname()),
  WATCH_NAMESPACE: z.string().optional(),
  HTTP__PORT: int(8080, 0, 65535),
  HTTP__HOST: z.string().default('0.0.0.0'),
  LEADER_ELECTION__ENABLED: bool.default(true),
  LEADER_ELECTION__LEASE_NAME: z.string().min(1).default('scriptorium-operator'),
  LEADER_ELECTION__LEASE_DURATION_SECONDS: int(15, 2, 600),
  LEADER_ELECTION__RENEW_DEADLINE_SECONDS: int(10, 1, 600),
  LEADER_ELECTION__RETRY_PERIOD_SECONDS: int(2, 1, 600),
  RECONCILE__CONCURRENCY: int(4, 1, 64),
  RESYNC_SECONDS: int(600, 0, 86_400),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof configSchema>;

/** Reads the configuration from the environment; throws one line naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = configSchema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`invalid configuration: ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`);
  }
  const config = result.data;
  if (config.LEADER_ELECTION__RENEW_DEADLINE_SECONDS >= config.LEADER_ELECTION__LEASE_DURATION_SECONDS) {
    throw new Error(
      'invalid configuration: LEADER_ELECTION__RENEW_DEADLINE_SECONDS must be shorter than LEADER_ELECTION__LEASE_DURATION_SECONDS',
    );
  }
  return config;
}
