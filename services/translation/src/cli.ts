// The translation service's commands:
//   serve                               HTTP API on PORT (3000): refuses to start when migrations are behind
//   migrate                             apply pending migrations
//   trigger worker|retention            POST to TRANSLATION_URL with WORKER_SECRET (CronJobs), retried through a
//                                       rollout (src/trigger.ts); exit code = result
//   keys create --user EMAIL [--org ID] issue an API key (operator); prints the secret once
//   keys revoke --key-id ID             revoke an API key (every replica refuses it within API_KEY_REVOCATION_CHECK_MS)
import { parseArgs } from 'node:util';
import { type Config, loadConfig } from './config.ts';
import { ConfigError } from './errors.ts';

// The heavy modules (database drivers, providers, tokenizer) load only for the commands that need them,
// so a bad variable or `trigger` answers at once.
const loadDb = () => import('./db/index.ts');
const loadAccounts = () => import('./domain/accounts.ts');
const loadServer = () => import('./server.ts');

const USAGE = `usage: main.ts <command>
  serve                                 run the HTTP API (port $PORT, default 3000)
  migrate                               apply pending database migrations
  trigger worker|retention              POST /api/worker or /api/retention on $TRANSLATION_URL
  keys create --user EMAIL [--org ID]   issue an API key; the secret is printed once
  keys revoke --key-id ID               revoke an API key (the keyId that keys create printed)`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function requireDatabaseUrl(config: Config): string {
  if (!config.databaseUrl) throw new ConfigError('DATABASE_URL: required');
  return config.databaseUrl;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig(process.env);
  switch (command) {
    case 'serve': {
      requireDatabaseUrl(config);
      const { startServer, handleSignals } = await loadServer();
      const server = await startServer(config);
      if (!config.workerSecret)
        server.logger.warn('WORKER_SECRET is not set: /api/worker and /api/retention answer 401');
      server.logger.info({ url: server.url }, 'listening');
      handleSignals(server, config.shutdownGraceMs);
      return;
    }
    case 'migrate': {
      const { migrate, openDatabase } = await loadDb();
      const { syncPlans } = await loadAccounts();
      const database = await openDatabase(requireDatabaseUrl(config));
      try {
        const applied = await migrate(database);
        await syncPlans(database, config.plans);
        process.stdout.write(`migrations applied: ${applied}\n`);
      } finally {
        await database.close();
      }
      return;
    }
    case 'trigger': {
      const which = rest[0];
      if (which !== 'worker' && which !== 'retention') fail(`trigger: expected worker or retention\n${USAGE}`, 2);
      if (!config.workerSecret) throw new ConfigError('WORKER_SECRET: required for trigger');
      const { trigger } = await import('./trigger.ts');
      const response = await trigger(which, {
        baseUrl: config.translationUrl,
        secret: config.workerSecret,
        timeoutMs: config.jobs.drainMaxMs + 60_000,
        onRetry: (reason, delayMs) =>
          process.stderr.write(`trigger ${which}: ${reason}; trying again in ${delayMs / 1000} s\n`),
      });
      process.stdout.write(`${response.body}\n`);
      if (!response.ok) fail(`trigger ${which}: HTTP ${response.status}`);
      return;
    }
    case 'keys': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: { user: { type: 'string' }, org: { type: 'string' }, 'key-id': { type: 'string' } },
        allowPositionals: true,
      });
      const keyId = positionals[0] === 'revoke' ? values['key-id'] : undefined;
      const user = positionals[0] === 'create' ? values.user : undefined;
      if (!keyId && !user) fail(`keys: expected create --user EMAIL [--org ID] or revoke --key-id ID\n${USAGE}`, 2);
      const { openDatabase } = await loadDb();
      if (keyId) {
        const { revokeApiKey } = await loadAccounts();
        const database = await openDatabase(requireDatabaseUrl(config));
        try {
          const revoked = await revokeApiKey(database, { keyId, actor: 'operator' });
          process.stdout.write(`${JSON.stringify({ keyId, revoked })}\n`);
        } finally {
          await database.close();
        }
        return;
      }
      if (!user) return;
      const { ensureUser, issueApiKey, NotAMemberError } = await loadAccounts();
      const database = await openDatabase(requireDatabaseUrl(config));
      try {
        const userId = await ensureUser(database, user);
        const key = await issueApiKey(database, {
          userId,
          orgId: values.org,
          defaultPlan: config.defaultPlan,
          actor: 'operator',
        });
        process.stdout.write(
          `${JSON.stringify({ apiKey: key.apiKey, prefix: key.prefix, keyId: key.keyId, orgId: key.orgId })}\n`,
        );
      } catch (e) {
        if (e instanceof NotAMemberError) fail(`keys create: ${user} is not a member of organization ${values.org}`);
        throw e;
      } finally {
        await database.close();
      }
      return;
    }
    default:
      fail(`unknown command: ${command}\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || (error instanceof Error && error.name === 'MigrationsBehindError'))
    fail(error.message);
  fail(`error: ${error instanceof Error ? error.message : String(error)}`);
});
