// `ledger-node witness` configuration: the witness settings of @scriptorium/ledger-protocol (WITNESS_*), its key
// file and the logs it follows. A bad value is a ConfigError: one line naming the variable.
import { readFileSync } from 'node:fs';
import { type WitnessLog, WitnessLog as WitnessLogSchema, witnessSettings } from '@scriptorium/ledger-protocol';
import type { KeyPair } from '@scriptorium/ledger-protocol/keys';
import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { readKeyFile } from '../node/files.ts';

export interface WitnessConfig {
  name: string;
  keys: KeyPair;
  stateFile: string;
  bindHost: string;
  bindPort: number;
  logs: WitnessLog[];
  logLevel: string;
}

/** Reads and validates the witness's environment. */
export function loadWitnessConfig(env: Record<string, string | undefined>): WitnessConfig {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(witnessSettings.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = witnessSettings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'environment'), issue?.message ?? 'invalid value');
  }
  const e = parsed.data;
  if ((e.WITNESS_LOGS === undefined) === (e.WITNESS_LOGS_FILE === undefined))
    throw new ConfigError(
      'WITNESS_LOGS',
      'set either WITNESS_LOGS or WITNESS_LOGS_FILE (the logs this witness follows)',
    );
  let text = e.WITNESS_LOGS ?? '';
  if (e.WITNESS_LOGS_FILE !== undefined) {
    try {
      text = readFileSync(e.WITNESS_LOGS_FILE, 'utf8');
    } catch (err) {
      throw new ConfigError(
        'WITNESS_LOGS_FILE',
        `cannot read ${e.WITNESS_LOGS_FILE}: ${(err as NodeJS.ErrnoException).code}`,
      );
    }
  }
  const variable = e.WITNESS_LOGS_FILE !== undefined ? 'WITNESS_LOGS_FILE' : 'WITNESS_LOGS';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError(variable, 'expected a JSON array of {origin, keys, quorum?}');
  }
  const logs = z.array(WitnessLogSchema).min(1).max(1000).safeParse(json);
  if (!logs.success) {
    const issue = logs.error.issues[0];
    throw new ConfigError(variable, `${issue?.path.join('.')}: ${issue?.message}`);
  }
  if (new Set(logs.data.map((l) => l.origin)).size !== logs.data.length)
    throw new ConfigError(variable, 'a log is listed twice');
  return {
    name: e.WITNESS_NAME,
    keys: readKeyFile(e.WITNESS_KEY_FILE),
    stateFile: e.WITNESS_STATE_FILE,
    bindHost: e.WITNESS_BIND_HOST,
    bindPort: e.WITNESS_BIND_PORT,
    logs: logs.data,
    logLevel: e.LOG_LEVEL,
  };
}
