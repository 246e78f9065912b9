// Listens, and stops gracefully on SIGTERM/SIGINT: stop accepting, drain in-flight requests, close the database.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type AppOptions, buildApp } from './app.ts';
import type { Config } from './config.ts';
import { type Database, migrationStatus, openDatabase } from './db/index.ts';
import { syncPlans } from './domain/accounts.ts';
import { createLogger } from './logger.ts';

export class MigrationsBehindError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationsBehindError';
  }
}

export interface RunningServer {
  app: FastifyInstance;
  logger: Logger;
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the database, refuses to start when migrations are behind, syncs PLANS, builds the app and listens.
 * @example const server = await startServer(loadConfig()); // …; await server.close();
 */
export async function startServer(
  config: Config,
  opts: { database?: Database } & Partial<Omit<AppOptions, 'config' | 'database'>> = {},
): Promise<RunningServer> {
  if (!opts.database && !config.databaseUrl) throw new Error('DATABASE_URL: required');
  const database = opts.database ?? (await openDatabase(config.databaseUrl!, { poolMax: config.databasePoolMax }));
  const status = await migrationStatus(database);
  if (status.pending.length > 0) {
    await database.close();
    throw new MigrationsBehindError(
      `the database is behind: ${status.pending.length} migration(s) pending (${status.pending.join(', ')}); run \`migrate\` first`,
    );
  }
  await syncPlans(database, config.plans);
  const logger = opts.logger ?? createLogger(config.logLevel);
  const app = await buildApp({ ...opts, config, database, logger });
  // reusePort (Node ≥ 22.12, Linux): replicas on one host bind the same port; fastify hands it to server.listen.
  const url = await app.listen({
    port: config.port,
    host: config.host,
    ...(config.reusePort ? { reusePort: true } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    app,
    logger,
    url,
    close: () => {
      closing ??= (async () => {
        await app.close();
        await database.close();
      })();
      return closing;
    },
  };
}

/** Closes `server` on SIGTERM/SIGINT, forcing an exit after the grace period. */
export function handleSignals(server: RunningServer, graceMs: number): void {
  const stop = (signal: string) => {
    server.logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      server.logger.error('shutdown grace period passed; exiting');
      server.logger.flush();
      process.exit(1);
    }, graceMs);
    timer.unref();
    const exit = (code: number) => {
      server.logger.flush();
      setImmediate(() => process.exit(code));
    };
    server.close().then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
