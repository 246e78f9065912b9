// Public surface of @scriptorium/translation (the app side; the language parts have their own exports).
export { type AppOptions, buildApp } from './app.ts';
export { type Config, loadConfig, type SettingName, settingNames, settingsSchema } from './config.ts';
export type { AppContext } from './context.ts';
export { type Database, migrate, migrationStatus, openDatabase } from './db/index.ts';
export { createOrganization, ensureUser, issueApiKey } from './domain/accounts.ts';
export type { Permission } from './domain/role-table.ts';
export { authorize } from './domain/roles.ts';
export { AppError, forbidden } from './errors.ts';
export { API_VERSION, buildOpenApi } from './http/openapi.ts';
export { createMetrics } from './infra/metrics.ts';
export { createSession, SESSION_COOKIE } from './infra/sessions.ts';
export { createLogger } from './logger.ts';
export { handleSignals, MigrationsBehindError, type RunningServer, startServer } from './server.ts';
