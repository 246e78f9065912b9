// `make dev` (through tools/dev.ts): the service on embedded PGlite (in .dev/translation/) with the pseudo
// provider; creates a user, an organization and an API key, and prints a curl line that works.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadConfig } from './config.ts';
import { migrate, openDatabase } from './db/index.ts';
import { handleSignals, startServer } from './server.ts';
import { createOrganization, ensureUser, issueApiKey } from './services/accounts.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const dataDir = process.env.TRANSLATION_DEV_DIR ?? join(root, '.dev', 'translation', 'pgdata');
const workerSecret = randomBytes(24).toString('base64url');

const config = loadConfig({
  PORT: '3000',
  HOST: '127.0.0.1',
  PROVIDER__KIND: 'pseudo',
  WORKER_SECRET: workerSecret,
  LOG_LEVEL: 'info',
  ...process.env,
  DATABASE_URL: `pglite:${dataDir}`,
});

const database = await openDatabase(config.databaseUrl!);
await migrate(database);
const userId = await ensureUser(database, 'dev@scriptorium.localhost');
const orgId = await createOrganization(database, { name: 'dev', planId: config.defaultPlan, ownerId: userId });
const key = await issueApiKey(database, { userId, orgId, defaultPlan: config.defaultPlan, actor: 'operator' });
const server = await startServer(config, { database });
handleSignals(server, config.shutdownGraceMs);

const body = JSON.stringify({
  sourceLocale: 'en',
  targetLocale: 'de',
  tier: 'cheap',
  items: [
    { id: 'greeting', text: 'Hello {name}, you have {count, plural, one {# message} other {# messages}}', isIcu: true },
  ],
  style: { tone: 'friendly' },
  glossary: [{ term: 'Scriptorium', target: null, neverTranslate: true }],
});
const base = server.url.replace('0.0.0.0', '127.0.0.1');
process.stdout.write(
  [
    '',
    `translation service (PGlite in ${dataDir}, pseudo provider) on ${base}`,
    `  API key (shown once): ${key.apiKey}`,
    `  worker secret:        ${workerSecret}`,
    `  try: curl -s ${base}/api/v1/translate -H 'authorization: Bearer ${key.apiKey}' -H 'content-type: application/json' -d '${body}'`,
    `  docs: ${base}/  ·  ${base}/api/v1/openapi.json`,
    '',
  ].join('\n'),
);
