// The backup commands' configuration from the environment: `backupSettings` of @scriptorium/ledger-protocol,
// the secrets also from `<NAME>_FILE`. A bad value is a ConfigError naming the variable (never its value).
import { readFileSync } from 'node:fs';
import { BACKUP_SECRET_SETTINGS, type BackupSettings, backupSettings } from '@scriptorium/ledger-protocol';
import { ConfigError } from '../errors.ts';

type Env = Record<string, string | undefined>;

function readFile(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(variable, `cannot read file ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

export interface BackupConfig {
  settings: BackupSettings;
  /** The endpoint's CA bundle, read. */
  ca: Buffer | undefined;
  nodeCa: Buffer | undefined;
}

/** @example const { settings } = loadBackupConfig(process.env) */
export function loadBackupConfig(env: Env): BackupConfig {
  const raw: Env = {};
  for (const key of Object.keys(backupSettings.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  for (const name of BACKUP_SECRET_SETTINGS) {
    const fileVariable = `${name}_FILE`;
    const file = env[fileVariable];
    if (!file) continue;
    if (raw[name] !== undefined) throw new ConfigError(fileVariable, `set either ${name} or ${fileVariable}, not both`);
    raw[name] = readFile(fileVariable, file).toString('utf8').trim();
  }
  const parsed = backupSettings.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(String(issue?.path[0] ?? 'environment'), issue?.message ?? 'invalid value');
  }
  const settings = parsed.data;
  return {
    settings,
    ca: settings.BACKUP__CA_FILE ? readFile('BACKUP__CA_FILE', settings.BACKUP__CA_FILE) : undefined,
    nodeCa: settings.BACKUP__NODE_CA_FILE ? readFile('BACKUP__NODE_CA_FILE', settings.BACKUP__NODE_CA_FILE) : undefined,
  };
}
